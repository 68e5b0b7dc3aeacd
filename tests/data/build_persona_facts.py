"""Build tests/data/persona_facts.json: first-person facts people tell about themselves, in
English and Chinese, for the offline model's fact rules (bench/offline_facts.py).

Run: `.venv/bin/python tests/data/build_persona_facts.py XPERSONA_DATASET_DIR` (the `dataset/`
folder of github.com/HLTCHKUST/Xpersona). Source and licence: tests/data/README.md. Only the
persona sentences are kept, unchanged; nothing is written or labelled by hand. The split is the
source's: its validation files are `tuning`, its test files `held-out`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "persona_facts.json"
FILES = {
    ("en", "tuning"): "En_persona_valid.json",
    ("en", "held-out"): "En_persona_test.json",
    ("zh", "tuning"): "Zh_persona_split_valid_human_annotated.json",
    ("zh", "held-out"): "Zh_persona_split_test_human_annotated.json",
}
PER_FILE = 450  # sentences kept per file, chosen by hash (the file stays small)


def by_hash(sentence: str) -> str:
    return hashlib.sha1(sentence.encode("utf-8")).hexdigest()


def main(folder: Path) -> None:
    facts = []
    for (language, split), name in FILES.items():
        dialogues = json.loads((folder / name).read_text(encoding="utf-8"))
        sentences = {s.strip() for d in dialogues for s in d["persona"] if s.strip()}
        for sentence in sorted(sentences, key=by_hash)[:PER_FILE]:
            facts.append({"lang": language, "split": split, "text": sentence})
    about = (
        "Persona sentences of XPersona (Lin et al., 2020; github.com/HLTCHKUST/Xpersona, "
        "dataset/, MIT licence): Persona-Chat's profile sentences and their human-corrected "
        "Chinese translation. Built by tests/data/build_persona_facts.py."
    )
    OUT.write_text(
        json.dumps({"about": about, "facts": facts}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8",
    )
    print(f"{len(facts)} sentences -> {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
