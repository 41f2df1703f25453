import subprocess
import sys


def test_cli_help_runs():
    out = subprocess.run([sys.executable, "-m", "core", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    assert "generate" in out.stdout


def test_every_command_has_a_working_help_with_a_description(capsys):
    import pytest

    from core.cli import COMMANDS, main

    for name in [*COMMANDS, "embeddings score", "embeddings fuse"]:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            main([*name.split(), "--help"])
        assert exc.value.code == 0, name
        out = capsys.readouterr().out
        usage, _, rest = out.partition("\n\n")
        assert usage.startswith(f"usage: python -m core {name}"), out
        assert not rest.startswith(("options:", "positional arguments:")), f"{name} --help has no description"
        assert "``" not in out and "`python -m core" not in out, f"{name} --help shows docstring markup"


def test_run_help_states_the_defaults():
    out = subprocess.run([sys.executable, "-m", "core", "run", "--help"], capture_output=True, text=True).stdout
    flat = " ".join(out.split())
    for text in ("local/smollm2 (default)", "(default 6)", "(default 120)", "(default 0.25)", "(default 20;",
                 "(default 512)", "reference 64"):
        assert text in flat, text
