"""Build dated_plans.json: plans said with a day in task-oriented dialogues (SGD in English,
RiSAWOZ in Chinese), each labelled with the day the dataset's own annotation gives, and later
questions about that day in the forms a user writes (tests/data/README.md says how).

    python tests/data/build_dated_plans.py <sgd repo dir> <x-risawoz repo dir>

Each repository is a git folder (`fetch` gives `/work/.mirror/<owner>+<name>/repo`); the files
are read with `git show`. Nothing is written or labelled by hand.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory.text.days import WEEKDAYS_EN, day_mentions

OUT = Path(__file__).with_name("dated_plans.json")
# SGD's dialogues are set on Friday 1 March 2019: its system confirms "March 2nd" as "tomorrow".
SGD_TODAY = date(2019, 3, 1)
# RiSAWOZ's dialogues name no date; its plans are read as said on this Monday.
RISAWOZ_TODAY = date(2026, 12, 7)
SGD_TOPICS = {"Restaurants": "restaurant", "Flights": "flight", "Buses": "bus",
              "Events": "event", "Hotels": "hotel", "Movies": "movie", "Services": "appointment",
              "Trains": "train", "RentalCars": "rental car", "Homes": "house visit",
              "Travel": "trip", "Music": "concert", "Calendar": "appointment"}  # fmt: skip
ZH_TOPICS = {"flight": "航班", "train": "高铁", "hotel": "酒店", "class": "课",
             "attraction": "景点", "restaurant": "餐厅", "car": "租车",
             "hospital": "医院"}  # fmt: skip
RISAWOZ_FILES = (
    "data/multi-llama/zhfewshot.json",
    "full_results/dst_zh_results.json",
    "e2e_results/zh/dst_zh_results10.json",
)
_QUESTION_ZH = re.compile(r"[?？吗呢么]$|^(?:帮我|请问|那|再)")


def _git(repo: Path, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], check=True,
                          capture_output=True, text=True).stdout  # fmt: skip


def _split(key: str) -> str:
    return "held_out" if int(hashlib.sha1(key.encode()).hexdigest(), 16) % 2 else "tuning"


def _one_day(text: str, today: date) -> date | None:
    days = {m.first for m in day_mentions(text, today) if m.one_day}
    return days.pop() if len(days) == 1 else None


def _kind(expression: str) -> str:
    text = expression.lower()
    for kind, pattern in (("today/tomorrow", r"today|tonight|tomorrow|今天|明天|后天"),
                          ("next weekday", r"next \w+day|下周|下星期"),
                          ("weekday", r"\w+day\b|周|星期|礼拜"),
                          ("day of month", r"the \d+|\d+号|of this month"),
                          ("month and day", r"[a-z]+ \d+|\d+ of [a-z]+|\d+月")):  # fmt: skip
        if re.search(pattern, text):
            return kind
    return "other"


def _next_confirmed(turns: list[dict], at: int, service: str, slot: str) -> str | None:
    """The value the system confirms for `slot` after the user's turn `at`, unless the user
    names that slot again first (they changed their mind)."""
    for turn in turns[at + 1 :]:
        for frame in turn["frames"]:
            if frame["service"] != service:
                continue
            for act in frame["actions"]:
                if act["slot"] != slot:
                    continue
                if turn["speaker"] == "USER" and act["act"] == "INFORM":
                    return None
                if act["act"] == "CONFIRM" and act["values"] and "date" in slot:
                    return str(act["values"][0])
    return None


def sgd_plans(repo: Path) -> list[dict]:
    """User turns that set a date slot the system then confirms; the label is the confirmed
    value (the dataset's normalised form, "next Monday", "March 4th") read on SGD_TODAY."""
    plans = []
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "-l", "HEAD", "dev/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    # Files the mirror keeps only as a name (too large) are skipped: the set says which it read.
    files = [line.split()[-1] for line in listed
             if "dialogues_" in line and line.split()[3] != "BAD"]  # fmt: skip
    for path in files:
        for dialogue in json.loads(_git(repo, path)):
            turns = dialogue["turns"]
            for at, turn in enumerate(turns):
                if turn["speaker"] != "USER" or turn["utterance"].rstrip().endswith("?"):
                    continue
                for frame in turn["frames"]:
                    for act in frame["actions"]:
                        value = _next_confirmed(turns, at, frame["service"], act["slot"])
                        if act["act"] != "INFORM" or value is None or not act["values"]:
                            continue
                        said = act["values"][0]
                        day = _one_day(value, SGD_TODAY)
                        if day is None or said.lower() not in turn["utterance"].lower():
                            continue
                        plans.append({
                            "id": f"sgd:{dialogue['dialogue_id']}", "language": "en",
                            "text": turn["utterance"], "said_on": SGD_TODAY.isoformat(),
                            "day": day.isoformat(), "expression": said, "kind": _kind(said),
                            "topic": SGD_TOPICS.get(frame["service"].split("_")[0], "plan"),
                            "resolved_as_labelled": _one_day(said, SGD_TODAY) == day,
                        })  # fmt: skip
    return list({p["id"]: p for p in plans}.values())  # one plan per dialogue: its last


def risawoz_plans(repo: Path) -> list[dict]:
    """User turns of X-RiSAWOZ's Chinese DST data stating their own plan (not a question) with a
    `date` slot; the label is that slot value read on RISAWOZ_TODAY."""
    plans = {}
    rows = [row for path in RISAWOZ_FILES for row in json.loads(_git(repo, path))]
    for row in rows:
        found = re.search(r"USER: ([^<]*?) <endofhistory>", row["input"])
        slot = re.findall(r"\( (\w+) \)[^(]*?date equal_to \" ([^\"]+) \"", row["output"])
        if not found or not slot or not row["input"].startswith("DST:"):
            continue
        said = found.group(1).split("USER:")[-1].strip().rstrip("。!！")
        domain, value = slot[-1]
        day = _one_day(value, RISAWOZ_TODAY)
        # The turn itself must say the day (the state carries it into later turns too).
        core = re.sub(r"(上午|下午|晚上|早上|中午)$", "", value)
        if day is None or core not in said or "我" not in said or _QUESTION_ZH.search(said):
            continue
        if domain == "weather":
            continue
        plans[said] = {
            "id": f"risawoz:{hashlib.sha1(said.encode()).hexdigest()[:10]}", "language": "zh",
            "text": said, "said_on": RISAWOZ_TODAY.isoformat(), "day": day.isoformat(),
            "expression": value, "kind": _kind(value), "topic": ZH_TOPICS.get(domain, "安排"),
            "resolved_as_labelled": _one_day(said, RISAWOZ_TODAY) == day,
        }  # fmt: skip
    return list(plans.values())


def questions(plan: dict) -> list[dict]:
    """Questions about the plan's day asked on the days before it, in each form that names it
    from there: tomorrow / the day after, its weekday (this or next), its day of the month, its
    month and day."""
    day = date.fromisoformat(plan["day"])
    asked = []
    for before in (1, 2, 5, 9):
        on = day - timedelta(days=before)
        weekday = WEEKDAYS_EN[day.weekday()]
        zh_weekday = "一二三四五六日"[day.weekday()]
        week_ahead = (day - timedelta(days=day.weekday())) - (on - timedelta(days=on.weekday()))
        forms = {"en": [], "zh": []}
        if before == 1:
            forms["en"].append(("tomorrow", "tomorrow"))
            forms["zh"].append(("tomorrow", "明天"))
        if before == 2:
            forms["en"].append(("the day after tomorrow", "the day after tomorrow"))
            forms["zh"].append(("the day after tomorrow", "后天"))
        if week_ahead.days == 0:
            forms["en"].append(("weekday", f"on {weekday}"))
            forms["zh"].append(("weekday", f"周{zh_weekday}"))
        if week_ahead.days == 7:
            forms["en"].append(("next weekday", f"next {weekday}"))
            forms["zh"].append(("next weekday", f"下周{zh_weekday}"))
        forms["en"].append(("day of month", f"on the {day.day}th"))
        forms["zh"].append(("day of month", f"{day.day}号"))
        forms["en"].append(("month and day", f"on {day:%B} {day.day}"))
        forms["zh"].append(("month and day", f"{day.month}月{day.day}日"))
        for kind, words in forms[plan["language"]]:
            text = (f"What about my {plan['topic']} {words}?" if plan["language"] == "en"
                    else f"{words}的{plan['topic']}怎么安排的？")  # fmt: skip
            asked.append({"plan": plan["id"], "asked_on": on.isoformat(), "kind": kind,
                          "text": text})  # fmt: skip
    return asked


def main(sgd: str, risawoz: str) -> None:
    plans = sgd_plans(Path(sgd)) + risawoz_plans(Path(risawoz))
    for plan in plans:
        plan["split"] = _split(plan["id"])
    data = {
        "provenance": "SGD (Rastogi et al., 2020; github.com/google-research-datasets/"
        "dstc8-schema-guided-dialogue, dev/, CC BY-SA 4.0) and X-RiSAWOZ's Chinese DST data "
        "(github.com/alee2022/llm-xrisawoz, its zh DST files, from RiSAWOZ, "
        "Quan et al., 2020); built by tests/data/build_dated_plans.py",
        "plans": plans,
        "questions": [q for plan in plans for q in questions(plan)],
    }
    OUT.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    for language in ("en", "zh"):
        mine = [p for p in plans if p["language"] == language]
        agree = sum(p["resolved_as_labelled"] for p in mine)
        print(f"{language}: {len(mine)} plans; the user's words resolve to the labelled day in "
              f"{agree}/{len(mine)}")  # fmt: skip


if __name__ == "__main__":
    main(*sys.argv[1:3])
