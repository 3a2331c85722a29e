"""The Ray engine (``ragrecall.ray``'s home): imported only when asked for; it imports Ray."""
