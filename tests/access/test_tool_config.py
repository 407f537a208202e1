"""The session-tool configuration reader (engine/agent_tools/tool_config.py), JSON and TOML.

A typo must not silently widen or narrow what an agent may read: every refusal is one
`ConfigError` line naming the file, the key path and what was expected. Sections the
engine does not model are accepted as they are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.agent_tools.tool_config import (
    ConfigError,
    ToolConfig,
    load_tool_config,
    tool_config_from_json,
)
from engine.errors import InputError

FULL = {
    "$schema": "https://openclaw.ai/config.json",
    "models": {"default": "anthropic/claude", "anything": [1, {"x": None}]},
    "channels": {"telegram": {"enabled": True}},
    "tools": {
        "profile": "coding",
        "exec": {"host": "sandbox"},
        "sessions": {"visibility": "tree"},
        "agentToAgent": {"enabled": False, "allow": ["work*", "ops"]},
    },
    "agents": {
        "defaults": {"sandbox": {"sessionToolsVisibility": "all", "mode": "non-main"},
                     "model": "x"},
        "entries": {"Main": {"workspace": "~/main"}, "work": {"default": True, "model": "y"}},
    },
    "session": {"mainKey": "Home", "scope": "global", "reset": {"mode": "daily"}},
}


def refusal(document: Any, path: str = "openclaw.json") -> str:
    with pytest.raises(ConfigError) as raised:
        tool_config_from_json(document, path)
    message = str(raised.value)
    assert "\n" not in message and isinstance(raised.value, InputError)
    return message


def test_no_settings_are_openclaws_defaults() -> None:
    assert tool_config_from_json({}) == ToolConfig() == ToolConfig(
        visibility="all", agent_to_agent_enabled=True, agent_to_agent_allow=(),
        sandbox_visibility="spawned", agents=(), default_agent="main", main_key="main",
        session_scope="per-sender")
    assert tool_config_from_json({"tools": {}, "agents": {}, "session": {}}) == ToolConfig()


def test_every_setting_is_read_and_unmodelled_sections_are_ignored() -> None:
    config = tool_config_from_json(FULL)
    assert config == ToolConfig(
        visibility="tree", agent_to_agent_enabled=False, agent_to_agent_allow=("work*", "ops"),
        sandbox_visibility="all", agents=("main", "work"), default_agent="work",
        main_key="home", session_scope="global")
    assert config.main_alias == "global"


def test_the_older_agents_list_and_the_default_agent() -> None:
    listed = tool_config_from_json({"agents": {"list": [{"id": "Ops"}, {"id": "dev"}]}})
    assert (listed.agents, listed.default_agent) == (("ops", "dev"), "ops")
    marked = tool_config_from_json({"agents": {"list": [{"id": "a"}, {"id": "b", "default": True}],
                                               "entries": {"a": {}}}})
    assert (marked.agents, marked.default_agent) == (("a", "b"), "b")


@pytest.mark.parametrize(("document", "message"), [
    ({"tool": {}}, "openclaw.json: tool: unknown key (expected one of: "),
    ({"tools": {"session": {}}}, "openclaw.json: tools.session: unknown key (expected one of: "),
    ({"tools": {"sessions": {"visibilty": "all"}}},
     "openclaw.json: tools.sessions.visibilty: unknown key (expected one of: visibility)"),
    ({"tools": {"agentToAgent": {"enable": False}}},
     "openclaw.json: tools.agentToAgent.enable: unknown key (expected one of: allow, enabled)"),
])
def test_unknown_keys_are_refused_with_their_path(document: Any, message: str) -> None:
    assert refusal(document).startswith(message)


@pytest.mark.parametrize(("document", "message"), [
    ([], "openclaw.json: expected an object, got a list"),
    ({"tools": []}, "openclaw.json: tools: expected an object, got a list"),
    ({"tools": {"sessions": None}}, "openclaw.json: tools.sessions: expected an object, got null"),
    ({"tools": {"sessions": {"visibility": "public"}}},
     'openclaw.json: tools.sessions.visibility: expected one of "self", "tree", "agent", '
     '"all", got "public"'),
    ({"tools": {"sessions": {"visibility": 5}}},
     'openclaw.json: tools.sessions.visibility: expected one of "self", "tree", "agent", '
     '"all", got 5'),
    ({"tools": {"sessions": {"visibility": "ALL"}}},
     'openclaw.json: tools.sessions.visibility: expected one of "self", "tree", "agent", '
     '"all", got "ALL"'),
    ({"tools": {"agentToAgent": {"enabled": "yes"}}},
     'openclaw.json: tools.agentToAgent.enabled: expected true or false, got "yes"'),
    ({"tools": {"agentToAgent": {"enabled": 1}}},
     "openclaw.json: tools.agentToAgent.enabled: expected true or false, got 1"),
    ({"tools": {"agentToAgent": {"allow": "work"}}},
     'openclaw.json: tools.agentToAgent.allow: expected a list of strings, got "work"'),
    ({"tools": {"agentToAgent": {"allow": ["a", 2]}}},
     "openclaw.json: tools.agentToAgent.allow: expected a list of strings, got a list"),
    ({"agents": {"defaults": {"sandbox": {"sessionToolsVisibility": "none"}}}},
     'openclaw.json: agents.defaults.sandbox.sessionToolsVisibility: expected one of '
     '"spawned", "all", got "none"'),
    ({"agents": {"defaults": []}}, "openclaw.json: agents.defaults: expected an object, got a list"),
    ({"agents": {"list": {"id": "a"}}}, "openclaw.json: agents.list: expected a list, got an object"),
    ({"agents": {"list": [{"id": "a"}, {"name": "b"}]}}, 'openclaw.json: agents.list[1]: missing "id"'),
    ({"agents": {"list": [{"id": " "}]}},
     'openclaw.json: agents.list[0].id: expected a non-empty string, got " "'),
    ({"agents": {"list": [{"id": "a", "default": "true"}]}},
     'openclaw.json: agents.list[0].default: expected true or false, got "true"'),
    ({"agents": {"entries": {"work": {"default": None}}}},
     "openclaw.json: agents.entries.work.default: expected true or false, got null"),
    ({"agents": {"entries": {"work": 3}}},
     "openclaw.json: agents.entries.work: expected an object, got 3"),
    ({"session": {"mainKey": ""}}, 'openclaw.json: session.mainKey: expected a non-empty string, got ""'),
    ({"session": {"scope": "per-peer"}},
     'openclaw.json: session.scope: expected one of "per-sender", "global", got "per-peer"'),
    ({"session": "main"}, 'openclaw.json: session: expected an object, got "main"'),
])
def test_wrong_types_are_refused_with_their_path_and_what_was_expected(
        document: Any, message: str) -> None:
    assert refusal(document) == message


def test_a_config_error_carries_its_parts() -> None:
    error = ConfigError("c.json", "tools.sessions", "unknown key")
    assert (error.path, error.key_path, error.reason) == ("c.json", "tools.sessions", "unknown key")
    assert str(ConfigError("c.json", "", "no such file")) == "c.json: no such file"


# ----- files ------------------------------------------------------------------------------


def test_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.json"
    path.write_text(json.dumps(FULL), encoding="utf-8")
    assert load_tool_config(path) == tool_config_from_json(FULL)


def test_a_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.toml"
    path.write_text('[tools.sessions]\nvisibility = "self"\n\n[tools.agentToAgent]\n'
                    'allow = ["work"]\n\n[[agents.list]]\nid = "work"\n', encoding="utf-8")
    assert load_tool_config(path) == ToolConfig(
        visibility="self", agent_to_agent_allow=("work",), agents=("work",),
        default_agent="work")


@pytest.mark.parametrize(("name", "content", "message"), [
    ("openclaw.toml", '[tools.sessions]\nvisiblity = "self"\n',
     "tools.sessions.visiblity: unknown key (expected one of: visibility)"),
    ("openclaw.json", '{"tools": {"sessions": {"visibility": "tree"}, "agentToagent": {}}}',
     "tools.agentToagent: unknown key (expected one of: "),
    ("openclaw.json", '{\n  "tools": {\n    "sessions": {"visibility": "tree",}\n  }\n}\n',
     "not valid JSON at line 3, column "),
    ("openclaw.toml", "[tools.sessions]\nvisibility = \n", "not valid TOML: "),
])
def test_a_bad_file_is_refused_in_one_line_naming_the_file_and_where(
        tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_tool_config(path)
    assert str(raised.value).startswith(f"{path}: {message}")
    assert "\n" not in str(raised.value)
    if name.endswith(".toml") and "TOML" in message:
        assert "line 2" in str(raised.value)


@pytest.mark.parametrize(("content", "reason"), [
    (b"\xff\xfe{}", "not UTF-8 text"),
    (b"[" * 100_000 + b"]" * 100_000, "not valid JSON: nested too deeply"),
])
def test_unreadable_json_is_refused_naming_the_file(tmp_path: Path, content: bytes,
                                                   reason: str) -> None:
    path = tmp_path / "openclaw.json"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as raised:
        load_tool_config(path)
    assert str(raised.value) == f"{path}: {reason}"


def test_a_missing_file_and_a_folder_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        load_tool_config(tmp_path / "absent.json")
    assert str(raised.value) == f"{tmp_path / 'absent.json'}: no such file"
    with pytest.raises(ConfigError) as raised:
        load_tool_config(tmp_path)
    assert str(raised.value).startswith(f"{tmp_path}: cannot read: ")
