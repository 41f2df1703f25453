"""Prompt templates kept as data (``templates.yaml``) and their rendering.

    load_templates(override=None) -> Templates     compiled defaults + a user's edits (ConfigError if invalid)
    default_templates() -> dict                    the shipped template document (editable copy)
    default_templates_yaml() -> str                the shipped YAML text, with its comments
    parse_templates_yaml(text) -> dict             an edited document, ConfigError on bad YAML
    templates_diff(edited) -> dict                 minimal override to store in a config's ``templates`` key
    phrasing_names(override=None), approach_names(override=None)
"""

from core.tasks.setops.prompts.templates import (
    PLACEHOLDERS,
    Templates,
    approach_names,
    default_templates,
    default_templates_yaml,
    load_templates,
    merge_templates,
    parse_templates_yaml,
    phrasing_names,
    templates_diff,
)

__all__ = [
    "PLACEHOLDERS", "Templates", "approach_names", "default_templates", "default_templates_yaml", "load_templates",
    "merge_templates", "parse_templates_yaml", "phrasing_names", "templates_diff",
]
