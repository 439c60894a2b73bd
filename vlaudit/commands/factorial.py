"""Commands: placeholder, filled by its issue."""
