"""HTML pages, self-contained: the shell every page shares and the eval and compare reports."""
