"""HTML pages, self-contained: the shell every page shares (html), the eval and compare
reports, and the page a person labels verdicts in (review)."""
