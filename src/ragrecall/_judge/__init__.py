"""The judge: resolved from what the user gives (``resolve``), typed replies from any chat model
(``structured``), the driver that runs a metric's steps (``drive``) under retries and deadlines
(``retry``), the scripted judges for tests (``scripted``) and the embedded judge (``local/``)."""
