"""Providers register where they are defined: each module of core/models/providers describes its provider and
registers its model class; the registry builds every spec through what was registered and names no provider
itself; listing the providers imports no SDK."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.models import PROVIDERS, get_model, providers as provider_pkg
from core.models.base import BaseModel, ModelError
from core.models.providers import ProviderInfo, builder, register

ROOT = Path(__file__).resolve().parents[2]


def _provider_classes():
    for mod in pkgutil.iter_modules(provider_pkg.__path__):
        module = importlib.import_module(f"core.models.providers.{mod.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseModel) and cls is not BaseModel and cls.__module__ == module.__name__:
                yield module, cls


def test_every_model_class_is_registered_by_its_own_module():
    classes = list(_provider_classes())
    assert {cls.provider for _, cls in classes} == {p.provider for p in PROVIDERS.values() if p.live}
    for module, cls in classes:
        assert module.INFO is PROVIDERS[cls.provider]
        assert builder(cls.provider) == cls.from_spec
        assert cls.default_concurrency == module.INFO.default_concurrency


def test_the_registry_names_no_provider():
    tree = ast.parse((ROOT / "core" / "models" / "registry.py").read_text(encoding="utf-8"))
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}   # they describe the providers
    literals = {n.value for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings}
    assert literals and not literals & set(PROVIDERS), literals & set(PROVIDERS)


def test_a_provider_registered_in_its_own_module_is_built_and_listed(monkeypatch):
    info = ProviderInfo("planted", "planted/one", 3, ("temperature",), "PLANTED_API_KEY", False, "a test provider")
    monkeypatch.setitem(PROVIDERS, "planted", info)   # undone after the test (register adds the same entry)
    monkeypatch.setattr(provider_pkg, "_BUILDERS", dict(provider_pkg._BUILDERS))

    @register(info)
    class Planted(BaseModel):
        def __init__(self, spec, name, **kw):
            super().__init__(spec, name)
            self.kw = kw

    model = get_model("planted/one", api_key="k", timeout=5)
    assert isinstance(model, Planted) and (model.spec, model.name, model.provider) == ("planted/one", "one", "planted")
    assert model.default_concurrency == 3 and model.kw["timeout"] == 5
    assert provider_pkg.key_env_for("planted/x") == "PLANTED_API_KEY"
    with pytest.raises(RuntimeError, match="two providers"):
        register(ProviderInfo("planted", "planted/two", 1, (), None, False, "another"))(Planted)


def test_provider_specific_checks_stay_with_the_provider():
    with pytest.raises(ModelError, match="use reference/solver"):
        get_model("reference/other")
    with pytest.raises(ModelError, match="runs in this process"):
        get_model("local/smollm2", base_url="http://127.0.0.1:8080/v1")
    assert get_model("local/smollm2").spec == "local/smollm2"


def test_listing_the_providers_imports_no_sdk():
    code = ("import sys; from core.models import PROVIDERS; assert len(PROVIDERS) >= 6; "
            "print(sorted({'openai', 'anthropic', 'llama_cpp'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
