"""Text work without a judge: sentences and words, contexts packed into the judge's window,
passages that address the judge and their redaction. The one home of ``ragrecall.text``."""
