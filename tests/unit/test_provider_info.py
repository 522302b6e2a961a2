"""The provider entry point's [snaprepl] config section is Settings, option for option, and valid
against Airflow's provider schema; the plugin is registered once although plugins/ is still searched."""

from __future__ import annotations

import json
from dataclasses import fields
from importlib.metadata import entry_points
from pathlib import Path

import airflow
import jsonschema

from snaprepl.airflow.plugin import SnapreplPlugin
from snaprepl.airflow.provider_info import get_provider_info, setting_descriptions
from snaprepl.settings import Settings


def test_every_setting_is_a_documented_option_with_its_type_and_default() -> None:
    info = get_provider_info()
    schema = json.loads((Path(airflow.__file__).parent / "provider_info.schema.json").read_text())
    jsonschema.validate(info, schema)
    options = info["config"]["snaprepl"]["options"]
    assert list(options) == [item.name for item in fields(Settings)]
    defaults = Settings()
    for name, option in options.items():
        value = getattr(defaults, name)
        assert option["type"] == {bool: "boolean", int: "integer", str: "string"}[type(value)], name
        assert option["default"] == (str(value).lower() if isinstance(value, bool) else str(value)), name
        assert option["description"] and len(option["description"]) > 10, name
    assert options["lock_timeout_seconds"]["description"].endswith("which Airflow retries.")


def test_every_setting_is_described_in_the_settings_docstring() -> None:
    assert set(setting_descriptions()) == {item.name for item in fields(Settings)}


def test_the_entry_points_name_the_provider_info_and_the_plugin() -> None:
    [provider] = [e for e in entry_points(group="apache_airflow_provider") if e.value.startswith("snaprepl.")]
    assert provider.load() is get_provider_info
    [plugin] = [e for e in entry_points(group="airflow.plugins") if e.value.startswith("snaprepl.")]
    assert plugin.load() is SnapreplPlugin


def test_the_plugin_and_its_page_are_registered_once() -> None:
    from airflow import plugins_manager

    plugins, errors = plugins_manager._get_plugins()
    assert [p.name for p in plugins].count("snaprepl") == 1
    assert not [source for source, message in errors.items() if "snaprepl" in f"{source} {message}"]
    apps, _ = plugins_manager.get_fastapi_plugins()
    assert [a["url_prefix"] for a in apps].count("/snaprepl") == 1
