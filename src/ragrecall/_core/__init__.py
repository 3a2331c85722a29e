"""What a sample and a result are, the errors, and the small machinery every group uses
(lazy tables, deprecation, optional extras, the user cache). Imports nothing else of
ragrecall."""
