"""W/.pneuma/coauthor.toml: the model behind each profile, the build, the actors.

Read on every start so a person can switch models by editing one file; a
missing file means the defaults, and the first run writes them out commented
so the file documents itself.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma_coauthor.domain.model import Actor

CONFIG_NAME = "coauthor.toml"

DEFAULT_TOML = """\
# CoAuthor settings for this workspace. Delete a line to get its default back.

# Three model profiles, each used for one kind of step (never mixed):
#   fast      - light parsing and the alternatives of /tweak
#   writer    - the LaTeX text of every patch
#   reasoning - the plan: goal, issues, strategy, scope, risks, questions
# The API key comes from ANTHROPIC_API_KEY, the endpoint from ANTHROPIC_BASE_URL.
# A profile may use an OpenAI-compatible server instead (provider = "openai"):
#   provider = "openai"                        # "anthropic" (the default) | "openai"
#   model = "deepseek-chat"
#   base_url = "https://api.deepseek.com/v1"   # unset: OPENAI_BASE_URL, else OpenAI
#   api_key_env = "DEEPSEEK_API_KEY"           # the NAME of the variable with the key
# A local server (Ollama) needs no key:
#   provider = "openai"
#   model = "qwen2.5:7b"
#   base_url = "http://127.0.0.1:11434/v1"
[profiles.fast]
model = "claude-haiku-4-5"
max_tokens = 4096

[profiles.writer]
model = "claude-sonnet-4-5"
max_tokens = 8192

[profiles.reasoning]
model = "claude-opus-4-5"
max_tokens = 4096

[build]
# "auto": run latexmk after each applied patch when it is installed; "off": never.
latexmk = "auto"
timeout = 180

[user]
id = "user"
display_name = "Author"
default_agent = "coauthor"

[agents.coauthor]
display_name = "CoAuthor"
"""

PROFILE_NAMES = ("fast", "writer", "reasoning")


@dataclass(frozen=True)
class Profile:
    name: str
    model: str
    max_tokens: int = 4096
    temperature: float | None = None
    # None: the gateway's own (anthropic, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY)
    provider: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None  # the NAME of the environment variable holding the key


@dataclass
class CoAuthorConfig:
    profiles: dict[str, Profile]
    build_mode: str = "auto"
    build_timeout: float = 180.0
    actors: dict[str, Actor] = field(default_factory=dict)
    user_id: str = "user"

    @property
    def user(self) -> Actor:
        return self.actors[self.user_id]

    def agents(self) -> list[Actor]:
        return [a for a in self.actors.values() if a.kind == "agent"]


def config_path(workspace: Path) -> Path:
    return workspace / ".pneuma" / CONFIG_NAME


def ensure_config(workspace: Path) -> Path:
    path = config_path(workspace)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(DEFAULT_TOML, encoding="utf-8")
    return path


def load_config(workspace: Path) -> CoAuthorConfig:
    defaults = tomllib.loads(DEFAULT_TOML)
    path = config_path(workspace)
    data: dict[str, Any] = tomllib.loads(path.read_text("utf-8")) if path.exists() else {}
    profiles = {}
    for name in PROFILE_NAMES:
        raw = {**defaults["profiles"][name], **data.get("profiles", {}).get(name, {})}
        profiles[name] = Profile(
            name=name,
            model=str(raw["model"]),
            max_tokens=int(raw.get("max_tokens", 4096)),
            temperature=float(raw["temperature"]) if "temperature" in raw else None,
            # Checked by the gateway at each call, so a wrong value blocks the
            # task with the reason instead of stopping every command.
            provider=str(raw["provider"]).strip().lower() if raw.get("provider") else None,
            base_url=str(raw["base_url"]) if raw.get("base_url") else None,
            api_key_env=str(raw["api_key_env"]) if raw.get("api_key_env") else None,
        )
    build = {**defaults["build"], **data.get("build", {})}
    user = {**defaults["user"], **data.get("user", {})}
    agents = data.get("agents") or defaults["agents"]
    actors: dict[str, Actor] = {}
    for agent_id, spec in agents.items():
        actors[agent_id] = Actor(
            id=agent_id,
            kind="agent",
            display_name=str(spec.get("display_name", agent_id)),
            capabilities=list(spec.get("capabilities", ["propose_patch", "run_build"])),
        )
    actors[user["id"]] = Actor(
        id=user["id"],
        kind="human",
        display_name=str(user.get("display_name", user["id"])),
        capabilities=["create_task", "apply_patch", "propose_patch", "run_build"],
        default_agent_id=str(user.get("default_agent", "coauthor")),
    )
    return CoAuthorConfig(
        profiles=profiles,
        build_mode=str(build.get("latexmk", "auto")),
        build_timeout=float(build.get("timeout", 180)),
        actors=actors,
        user_id=str(user["id"]),
    )
