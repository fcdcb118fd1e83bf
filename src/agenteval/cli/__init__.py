"""Command-line front end."""
