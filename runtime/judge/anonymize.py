"""Remove model identity from an output before a judge or a reviewer reads it (seed 001 §5.1).

A judge that can tell which model wrote an answer can favour it (self-preference, brand
bias), so the judge sees the output anonymized:

- every model id of the plan and of its judges (`openai/gpt-4.1`), its provider prefix
  (`openai`) and its name (`gpt-4.1`), matched case-insensitively on word boundaries;
- the names of model makers and model families a reply commonly carries (OpenAI, Anthropic,
  Claude, ChatGPT, GPT-4o, Gemini, Llama, Mistral, DeepSeek, Qwen, Grok, ...): a fixed list,
  chosen so that none of its words is ordinary finance prose (no "Nova", "Titan", "Command");
- self-references that identify a system as a model: "As an AI language model", "I am an AI
  assistant", "I was trained by ...", "my knowledge cutoff ...".

Each is replaced by `[anonymized]`. Figures are never touched (a name part that is only
digits and dots, like the `4.1` of `gpt-4.1`, is not a term on its own), so the deterministic
checks and the judge read the same numbers. Matching uses plain alternations of literals and
bounded character classes: linear in the text for Python's engine, whatever the text holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

MARK = "[anonymized]"

VENDOR_TERMS: tuple[str, ...] = (
    "OpenAI", "Open AI", "ChatGPT", "Chat GPT", "GPT-5", "GPT-4.1", "GPT-4o", "GPT-4", "GPT-3.5", "GPT", "o1-preview", "o3-mini",
    "Anthropic", "Claude", "Gemini", "Google DeepMind", "DeepMind", "Bard", "PaLM",
    "Llama", "LLaMA", "Meta AI", "Mistral AI", "Mistral", "Mixtral", "Codestral",
    "Cohere", "DeepSeek", "Qwen", "Alibaba Cloud", "Grok", "xAI", "Perplexity",
    "Azure OpenAI", "Vertex AI", "Amazon Bedrock", "Bedrock", "Microsoft Copilot",
    "AI21", "Jamba", "Moonshot AI", "Kimi", "Zhipu", "ChatGLM", "Ernie Bot",
)

# Self-references: bounded classes only ([^.\n]{0,80}), so no pattern can backtrack far.
_SELF = (
    r"\b(?:as|being)\s+an?\s+(?:AI|artificial[ -]intelligence|large[ -]language|language)(?:[ -]language)?[ -](?:model|assistant)\b",
    r"\bI(?:'m|\s+am)\s+(?:just\s+|only\s+)?an?\s+(?:AI|artificial[ -]intelligence|LLM|large[ -]language[ -]model|language[ -]model|"
    r"chatbot|virtual\s+assistant)(?:[ -](?:language[ -])?(?:model|assistant))?\b[^.\n]{0,80}",
    r"\bI\s+(?:was|am|have\s+been)\s+(?:created|made|developed|trained|built|designed)\s+by\b[^.\n]{0,80}",
    r"\bmy\s+(?:training\s+data|training\s+cut-?off|knowledge\s+cut-?off)\b[^.\n]{0,80}",
)

_NUMERIC = re.compile(r"^[0-9.]+$")


def _terms(model_ids: Iterable[str]) -> list[str]:
    terms = set(VENDOR_TERMS)
    for model_id in model_ids:
        terms.add(model_id)
        provider, _, name = model_id.partition("/")
        if provider == "lrc":  # the embedded models never name themselves; "oracle" is also a vendor of ERPs
            continue
        for part in (provider, name):
            if len(part) >= 3 and not _NUMERIC.match(part):
                terms.add(part)
    # Longest first, so "GPT-4.1" wins over "GPT" and a full id over its parts.
    return sorted(terms, key=lambda t: (-len(t), t))


@dataclass(frozen=True)
class Anonymizer:
    """Built once per plan from the model ids it runs (candidates and judges)."""

    pattern: re.Pattern[str]

    def __call__(self, text: str) -> str:
        return self.pattern.sub(MARK, text)


def anonymizer(model_ids: Iterable[str]) -> Anonymizer:
    names = "|".join(re.escape(t) for t in _terms(model_ids))
    # (?<![\w/-]) / (?![\w/-]) are word boundaries that also treat a model id's
    # punctuation as part of the word: "gpt-4.1" never matches inside "xgpt-4.1".
    # A version tail ("-4.10", "-3.1-70b") belongs to the name it follows.
    brand = rf"(?<![\w/-])(?:{names})(?:-[\w.]{{1,24}}){{0,4}}(?![\w/-]|\.\d)"
    return Anonymizer(re.compile("|".join([*_SELF, brand]), re.IGNORECASE))
