"""Errors meant for the user: shown as one clear line (CLI) or an st.error (UI), never a traceback."""


class UserError(Exception):
    """Bad input from the user: a config, a file, an argument. The message says what is wrong."""


class ConfigError(UserError):
    """A task configuration that cannot be used (unknown key, impossible value…)."""


class ImportFileError(UserError):
    """An uploaded/imported file that is not a readable result file."""
