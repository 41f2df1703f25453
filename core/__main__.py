import sys

from core import cli

code = cli.main()
if cli.EXIT_FAST:   # a command that closed everything it opened (see cli.exit_fast)
    cli.exit_fast(code)
sys.exit(code)
