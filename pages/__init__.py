"""The dashboard's pages (one thin file each; app.py lists them through ui/nav.py) and their shared helpers."""
