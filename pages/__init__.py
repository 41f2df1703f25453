"""The dashboard's pages (one thin file each; app.py lists them through pages/_ui/nav.py) and their shared helpers."""
