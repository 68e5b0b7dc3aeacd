"""Build tests/data/instruction_set.json, the labelled sentences of bench/instructions.py: standing
instructions for replies against ordinary facts, preferences and one-off format requests (en, zh).

- Format requests (`request`): the constraint sentences of IFEval's prompts (English; Zhou et al.
  2023, google-research/instruction_following_eval, here from the mirror github.com/Podtech-AI/
  IFEval `data/input_data.jsonl`, Apache 2.0) and of Chinese IFEval
  (github.com/8188zq/Chinese_Multiturn_IFEval `data/single_turn.jsonl`, commit c0a478a6, the line
  after each question; licence not stated), as the sources wrote them: each asks for one answer.
- Standing instructions (`instruction`): the same sentences made standing by one of three
  prefixes written here ("From now on, …", "以后…"): no public set of standing instructions in
  a user's words was reachable, so these measure which reply constraints the rules know, not
  how people phrase "from now on".
- Ordinary statements (`fact`, `preference`, `small_talk`): tests/data/public_admission_set.json
  (Persona-Chat persona sentences; DailyDialog and its Chinese translation XDailyDialog) and the
  MemoryBank Chinese facts of tests/data/writer_set.json; `preference` when
  `memory.text.preferences.states_preference` says the sentence states a taste.

Split: `held-out` when the first 8 hex digits of sha1(the source key) are divisible by 3, else
`tuning` (a constraint's request and its standing forms stay on one side). Run:
`python tests/data/build_instruction_set.py /path/to/ifeval/input_data.jsonl`.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

from memory.text.preferences import states_preference

HERE = Path(__file__).resolve().parent
OUT = HERE / "instruction_set.json"
# Chinese IFEval's constraint line of each of its 25 single-turn prompts (key: sentence).
ZH_REQUESTS = {
    0: "在你的回答里要使用“['为', '高音']”这两个词语。",
    1: "在你的回答里需要恰好使用“年”这个词语3次。",
    2: "在你的回答里禁止出现“['你', '只有', '它', '然后']”这些词。",
    3: "你的回答中有且只能包含3段。你的段落之间需要用markdown分隔符隔开,即***。",
    4: "你的回答共计不能超过300字。",
    5: "你的回答必须在300字到500字的范围内。",
    6: "你的回答中的第1段不能超过100字。你的段落之间需要用markdown分隔符隔开,即***。",
    7: "你的回答中的第3段必须在100字到400字的范围内。你的段落之间需要用markdown分隔符隔开,即***。",
    8: "首先逐字逐句地重复问题内容，不做任何更改，然后再给出你的回答"
    "（1. 在重复问题之前，不要说任何文字 2. 你需要重复的内容不包括这句话）",
    9: "给出两个不同的回答，两个回答间用9个星形符号，即*********，进行分隔。",
    10: "你的回答需要包含一个题目，用书名号(《》)括起来。",
    11: "你的回答的每一段落第一行要以事实上作为开头。你的段落之间需要用markdown分隔符隔开,即***",
    12: "你的回答的每一段落最后一行要以吧作为结尾。你的段落之间需要用markdown分隔符隔开,即***",
    13: "你的回答的第一行要以一般来说作为开头",
    14: "你的回答的最后一行要以吧作为结尾。",
    15: "你的回答必须按照json的格式进行包装，不能包含其他任何内容。",
    16: "在你的回答中至少需要对5处进行markdown格式下的加粗（**）",
    17: "你的回答中必须包含2处分点，使用markdown格式下的项目符号进行分点。",
    18: "你的回答中至少需要包含两句以上的陈述句。每个陈述句的`。`之后需要字符`是不是？`。",
    19: "你的回答中至少需要包含两句以上的感叹句。每个感叹句的`！`之后需要字符`难道不是吗？`。",
    20: "你的回答中至少需要包含两句以上的疑问句。每个疑问句的`？`之后需要字符`对吧？`。",
    21: "你的回答有且只能有两部分，用9个*分隔，即*********，"
    "前一部分的结尾字必须是仄声，后一部分的结尾字必须是平声,不允许以轻声结尾。",
    22: "你的回答有且只能有两部分，后者是前者的拼音标注，用9个*分隔，即*********，"
    "拼音不需要标注音调，使用拉丁字母来表示，和输入法保持一致，如“ü”可以用“v”替代。",
    23: "你的回答需要包含一句排比句，用&&框起来，如&排比句&。"
    "排比句中用逗号分隔的每个分句字数要一致。",
    24: "你的回答需要用文言文的形式给出，即中间不加任何标点符号。",
}
STANDING_EN = ("From now on, {s}", "Going forward, in every reply: {s}",
               "Please do this in all your answers from now on: {s}")  # fmt: skip
STANDING_ZH = ("以后{s}", "从现在开始，{s}", "以后每次回答都这样：{s}")
# An IFEval sentence that states a constraint on the answer (not the task itself).
_CONSTRAINT = re.compile(
    r"\b(your (entire )?(response|answer|reply|output|essay|poem|story)|the response|answer with|"
    r"respond with|wrap (your|the)|finish (your|with)|end (your|it) with|highlight|markdown|"
    r"(do not|don't) (use|include|mention)|in all (lowercase|capital)|capital letters|"
    r"lowercase|p\.s\.|postscript|placeholders?|bullet points?|sections?|paragraphs?|"
    r"title|quotation marks|commas?|at least \d+|at most \d+|less than \d+|no more than)\b",
    re.IGNORECASE,
)
_TASK_START = re.compile(
    r"^(write|create|generate|compose|tell|can|could|what|how|why|who|which|explain|describe|"
    r"i |i'm|my |give me a|make a|draft|help|imagine|rewrite|list|summari[sz]e)",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def split_of(key: str) -> str:
    return "held-out" if int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % 3 == 0 else "tuning"


def english_requests(ifeval: Path) -> dict[str, str]:
    """key → constraint sentence, one per distinct sentence of IFEval's prompts."""
    found: dict[str, str] = {}
    for line in ifeval.read_text().splitlines():
        prompt = json.loads(line)
        for n, sentence in enumerate(_SENTENCE.split(" ".join(prompt["prompt"].split()))):
            sentence = sentence.strip()
            if (
                20 <= len(sentence) <= 240
                and _CONSTRAINT.search(sentence)
                and not (_TASK_START.match(sentence))
            ):
                found.setdefault(sentence, f"ifeval:{prompt['key']}:{n}")
    return {key: sentence for sentence, key in found.items()}


def _standing(sentence: str, templates: tuple[str, ...], lower: bool) -> list[str]:
    start = sentence[0].lower() + sentence[1:] if lower else sentence
    return [template.format(s=start) for template in templates]


def build(ifeval: Path) -> list[dict[str, str]]:
    cases: list[dict[str, str]] = []
    sources = [("en", english_requests(ifeval), STANDING_EN, "IFEval input_data.jsonl"),
               ("zh", {f"zh-ifeval:{k}": s for k, s in ZH_REQUESTS.items()}, STANDING_ZH,
                "Chinese_Multiturn_IFEval single_turn.jsonl")]  # fmt: skip
    for lang, requests, templates, source in sources:
        for key, sentence in requests.items():
            split = split_of(key)
            cases.append({"id": key, "lang": lang, "label": "request", "text": sentence,
                          "split": split, "source": f"{source} {key}"})  # fmt: skip
            for n, text in enumerate(_standing(sentence, templates, lang == "en")):
                cases.append({"id": f"{key}:standing{n}", "lang": lang, "label": "instruction",
                              "text": text, "split": split,
                              "source": f"{source} {key}, prefix written here"})  # fmt: skip
    admission = json.loads((HERE / "public_admission_set.json").read_text())["turns"]
    for turn in admission:
        label = "fact" if turn["label"] == "keep" else "small_talk"
        if states_preference(turn["text"]):
            label = "preference"
        cases.append({"id": turn["id"], "lang": turn["lang"], "label": label, "text": turn["text"],
                      "split": split_of(turn["id"]),
                      "source": f"public_admission_set.json {turn['id']}"})  # fmt: skip
    for case in json.loads((HERE / "writer_set.json").read_text()):
        if case["kind"] == "fact" and case["language"] == "zh":
            for n, text in enumerate(case["turns"]):
                key = f"{case['id']}:{n}"
                label = "preference" if states_preference(text) else "fact"
                source = f"writer_set.json {key}"
                cases.append({"id": key, "lang": "zh", "label": label, "text": text,
                              "split": split_of(key), "source": source})  # fmt: skip
    return cases


def main(argv: list[str]) -> int:
    cases = build(Path(argv[1]))
    about = (
        "Standing instructions for replies against ordinary statements and one-off format "
        "requests (en, zh): see tests/data/README.md and tests/data/build_instruction_set.py."
    )
    OUT.write_text(json.dumps({"about": about, "cases": cases}, ensure_ascii=False, indent=1))
    print(f"{len(cases)} cases written to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
