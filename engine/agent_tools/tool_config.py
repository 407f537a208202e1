"""The session-tool part of an OpenClaw configuration file, read strictly.

Owns: `ToolConfig` (the settings the session tools obey) and reading it from a JSON or
TOML file in OpenClaw's own shape, so a user can point at the `openclaw.json` they already
have. Must not touch: what the settings mean (`engine.agent_tools.visibility`) or any store.

The settings and where they live (OpenClaw 2026.9.6's configuration schema):

    tools.sessions.visibility                   "self" | "tree" | "agent" | "all" (default "all")
    tools.agentToAgent.enabled                  bool (default true)
    tools.agentToAgent.allow                    [str]: agent ids or `*` globs (default: all)
    agents.defaults.sandbox.sessionToolsVisibility  "spawned" | "all" (default "spawned")
    agents.entries                              {agentId: {...}}: the configured agents
    agents.list                                 [{"id": agentId, "default"?: bool, ...}]: the
                                                older form OpenClaw migrates to `entries`
    session.mainKey                             str (default "main")
    session.scope                               "per-sender" | "global" (default "per-sender")

Strictness. A typo must not silently widen or narrow what an agent may read, so:
* a top-level key that is not one of OpenClaw's own sections is refused;
* inside `tools`, a key OpenClaw does not define is refused;
* `tools.sessions` and `tools.agentToAgent` are strict objects (as in OpenClaw's schema);
* every setting above must have its type; a value of the wrong type or outside its enum
  is refused.
Sections this engine does not model (`models`, `channels`, `tools.exec`, the many keys of
an agent entry, ...) are accepted as they are and ignored: they govern features other than
session search, and refusing them would refuse every real configuration. Each refusal is
one `ConfigError` naming the file, the key path and what was expected.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import InputError

VISIBILITIES = ("self", "tree", "agent", "all")
SANDBOX_VISIBILITIES = ("spawned", "all")
SESSION_SCOPES = ("per-sender", "global")

#: OpenClaw 2026.9.6's top-level configuration sections (`OpenClawSchemaShape`).
TOP_LEVEL_SECTIONS = frozenset((
    "$schema meta env wizard diagnostics logging update telemetry browser ui secrets auth "
    "accessGroups acp models nodeHost agents worktreeRoot worktreeAcceleration tools "
    "security bindings broadcast attachments messages tts commands approvals session cron "
    "transcripts hooks channels discovery talk gateway cloudWorkers desktop memory mcp "
    "skills plugins surfaces proxy"
).split())

#: The keys of OpenClaw's `tools` section (`ToolsSchema`).
TOOLS_KEYS = frozenset((
    "profile allow alsoAllow deny byProvider toolsBySender web github media links sessions "
    "loopDetection toolSearch codeMode swarm message agentToAgent elevated exec fs "
    "subagents sandbox updatePlan"
).split())


class ConfigError(InputError):
    """A configuration file that cannot be used: names the file, the key path and why.

    >>> str(ConfigError("openclaw.json", "tools.sessions.visibilty", "unknown key"))
    'openclaw.json: tools.sessions.visibilty: unknown key'
    """

    def __init__(self, path: str, key_path: str, reason: str) -> None:
        self.path = path
        self.key_path = key_path
        self.reason = reason
        where = f"{path}: {key_path}" if key_path else path
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True, slots=True)
class ToolConfig:
    """The settings the session tools obey; the defaults are OpenClaw's.

    `agents` are the configured agent ids in file order (empty: none configured);
    `default_agent` the one marked `default`, else the first, else `main`.
    `session_link_base` is the Control UI's address (origin and base path, at most 200
    characters), which OpenClaw derives from its gateway settings; given, the tool's
    answers carry a `sessionLinkRule` built from it. It is set by the caller (`call` and
    `serve` take `--session-link-base URL`), not read from the file.
    """

    visibility: str = "all"
    agent_to_agent_enabled: bool = True
    agent_to_agent_allow: tuple[str, ...] = ()
    sandbox_visibility: str = "spawned"
    agents: tuple[str, ...] = ()
    default_agent: str = "main"
    main_key: str = "main"
    session_scope: str = "per-sender"
    session_link_base: str | None = None

    @property
    def main_alias(self) -> str:
        """The key the main session is shown as in the tool's answers (OpenClaw's alias):
        `global` when sessions are global, else the main key.

        >>> ToolConfig().main_alias, ToolConfig(session_scope="global").main_alias
        ('main', 'global')
        """
        return "global" if self.session_scope == "global" else self.main_key


class _Reader:
    """Walks a decoded file, refusing with the file's name and the key path."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, key_path: str, reason: str) -> ConfigError:
        return ConfigError(self.path, key_path, reason)

    def section(self, value: Any, key_path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(key_path, f"expected an object, got {describe(value)}")
        return value

    def only(self, section: Mapping[str, Any], key_path: str, allowed: frozenset[str]) -> None:
        for key in section:
            if key not in allowed:
                raise self.fail(join(key_path, key), "unknown key (expected one of: "
                                + ", ".join(sorted(allowed)) + ")")

    def choice(self, value: Any, key_path: str, choices: tuple[str, ...]) -> str:
        if not isinstance(value, str) or value not in choices:
            raise self.fail(key_path, "expected one of " + ", ".join(
                f'"{choice}"' for choice in choices) + f", got {describe(value)}")
        return value

    def boolean(self, value: Any, key_path: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key_path, f"expected true or false, got {describe(value)}")
        return value

    def text(self, value: Any, key_path: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key_path, f"expected a non-empty string, got {describe(value)}")
        return value.strip()

    def texts(self, value: Any, key_path: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.fail(key_path, f"expected a list of strings, got {describe(value)}")
        return tuple(value)


def join(key_path: str, key: str | int) -> str:
    """`key_path` extended by one key or index.

    >>> join("", "tools"), join("tools", "sessions"), join("agents.list", 2)
    ('tools', 'tools.sessions', 'agents.list[2]')
    """
    if isinstance(key, int):
        return f"{key_path}[{key}]"
    return f"{key_path}.{key}" if key_path else key


def describe(value: Any) -> str:
    """A short description of a decoded value, for messages.

    >>> describe("x"), describe(3), describe(None), describe([1])
    ('"x"', '3', 'null', 'a list')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 40 else value[:40] + "…", ensure_ascii=False)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "a list"
    return "an object"


def tool_config_from_json(value: Any, path: str = "<config>") -> ToolConfig:
    """The settings of one decoded configuration document (see the module docstring).

    >>> tool_config_from_json({"tools": {"sessions": {"visibility": "tree"}}}).visibility
    'tree'
    >>> tool_config_from_json({"tools": {"session": {}}})
    Traceback (most recent call last):
    ...
    engine.agent_tools.tool_config.ConfigError: <config>: tools.session: unknown key (expected one of: ...)
    """
    reader = _Reader(path)
    document = reader.section(value, "")
    reader.only(document, "", TOP_LEVEL_SECTIONS)
    settings: dict[str, Any] = {}
    if "tools" in document:
        tools = reader.section(document["tools"], "tools")
        reader.only(tools, "tools", TOOLS_KEYS)
        if "sessions" in tools:
            sessions = reader.section(tools["sessions"], "tools.sessions")
            reader.only(sessions, "tools.sessions", frozenset({"visibility"}))
            if "visibility" in sessions:
                settings["visibility"] = reader.choice(
                    sessions["visibility"], "tools.sessions.visibility", VISIBILITIES)
        if "agentToAgent" in tools:
            policy = reader.section(tools["agentToAgent"], "tools.agentToAgent")
            reader.only(policy, "tools.agentToAgent", frozenset({"enabled", "allow"}))
            if "enabled" in policy:
                settings["agent_to_agent_enabled"] = reader.boolean(
                    policy["enabled"], "tools.agentToAgent.enabled")
            if "allow" in policy:
                settings["agent_to_agent_allow"] = reader.texts(
                    policy["allow"], "tools.agentToAgent.allow")
    if "agents" in document:
        settings.update(_agents(reader, reader.section(document["agents"], "agents")))
    if "session" in document:
        session = reader.section(document["session"], "session")
        if "mainKey" in session:
            settings["main_key"] = reader.text(session["mainKey"], "session.mainKey").lower()
        if "scope" in session:
            settings["session_scope"] = reader.choice(session["scope"], "session.scope",
                                                      SESSION_SCOPES)
    return ToolConfig(**settings)


def _agents(reader: _Reader, agents: Mapping[str, Any]) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    defaults = agents.get("defaults")
    if defaults is not None:
        defaults = reader.section(defaults, "agents.defaults")
        sandbox = defaults.get("sandbox")
        if sandbox is not None:
            sandbox = reader.section(sandbox, "agents.defaults.sandbox")
            if "sessionToolsVisibility" in sandbox:
                settings["sandbox_visibility"] = reader.choice(
                    sandbox["sessionToolsVisibility"],
                    "agents.defaults.sandbox.sessionToolsVisibility", SANDBOX_VISIBILITIES)
    configured: list[tuple[str, bool]] = []
    if "entries" in agents:
        entries = reader.section(agents["entries"], "agents.entries")
        for agent_id, entry in entries.items():
            entry = reader.section(entry, join("agents.entries", agent_id))
            marked = entry.get("default", False)
            configured.append((reader.text(agent_id, "agents.entries").lower(),
                               reader.boolean(marked, join(join("agents.entries", agent_id),
                                                           "default"))))
    if "list" in agents:
        listed = agents["list"]
        if not isinstance(listed, list):
            raise reader.fail("agents.list", f"expected a list, got {describe(listed)}")
        for position, entry in enumerate(listed):
            where = join("agents.list", position)
            entry = reader.section(entry, where)
            if "id" not in entry:
                raise reader.fail(where, 'missing "id"')
            configured.append((reader.text(entry["id"], join(where, "id")).lower(),
                               reader.boolean(entry.get("default", False), join(where, "default"))))
    if configured:
        ids = tuple(dict.fromkeys(agent_id for agent_id, _ in configured))
        marked = [agent_id for agent_id, is_default in configured if is_default]
        settings["agents"] = ids
        settings["default_agent"] = marked[0] if marked else ids[0]
    return settings


def load_tool_config(path: str | Path) -> ToolConfig:
    """Read a configuration file: TOML when it ends in `.toml`, else JSON.

    A file that cannot be read or decoded is refused naming the file (and, for a syntax
    error, the line).
    """
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(name, "", "no such file") from None
    except OSError as error:
        raise ConfigError(name, "", f"cannot read: {error.strerror or error}") from None
    if name.endswith(".toml"):
        try:
            value: Any = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise ConfigError(name, "", f"not valid TOML: {error}") from None
    else:
        try:
            # without the file's last line ends, a file cut short inside a string fails
            # where the string starts, not on the newline after it
            value = json.loads(raw.decode("utf-8").rstrip("\r\n"))
        except UnicodeDecodeError:
            raise ConfigError(name, "", "not UTF-8 text") from None
        except json.JSONDecodeError as error:
            raise ConfigError(name, "", f"not valid JSON at line {error.lineno}, column "
                              f"{error.colno}: {error.msg}") from None
        except RecursionError:
            raise ConfigError(name, "", "not valid JSON: nested too deeply") from None
    return tool_config_from_json(value, name)
