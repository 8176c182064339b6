"""The held-out adversarial rounds' case files load and are well formed (bench/adversarial/).

A case that cannot be run the way its kind's oracle reads it would pass as "held" without testing
anything: a rendering case whose token is in no input, a secret that no step carries, a step the
runner does not know. This reads the files only; it never runs the product (the rounds run with
`python3 bench/adversarial.py --round N`).
"""
import importlib.util
import json
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SPEC = importlib.util.spec_from_file_location("adversarial", os.path.join(REPO, "bench", "adversarial.py"))
adv = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(adv)

STEP_KEYS = {"cli", "cli_gen", "hook", "hook_raw", "hook_gen", "hook_bytes_hex", "tools", "session", "jit", "stop",
             "write", "write_hex", "append", "append_gen", "mkdir", "mkfifo", "symlink", "git", "edit", "check",
             "hold_lock", "hold_sqlite", "apply_proposals", "parallel", "turns"}


def _cases(rnd):
    out = []
    for kind, name in adv.FILES.items():
        path = os.path.join(adv.CASES_DIRS[rnd], name)
        if rnd >= 4 and not os.path.exists(path):  # (from round 4, a round tries what changed)
            continue
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        assert isinstance(doc["about"], str) and doc["about"], (rnd, kind)
        out += [(kind, case) for case in doc["cases"]]
    return out


def _steps(case):
    for key in ("steps", "setup", "after"):
        for step in case.get(key) or []:
            yield step
            yield from step.get("parallel") or []


@pytest.mark.parametrize("rnd", sorted(adv.CASES_DIRS))
def test_every_round_has_every_kind_with_unique_ids(rnd):
    cases = _cases(rnd)
    ids = [case["id"] for _kind, case in cases]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    kinds = {kind for kind, _case in cases}
    assert kinds == set(adv.KINDS) if rnd < 4 else kinds <= set(adv.KINDS)
    for kind, case in cases:
        assert case["kind"] == kind and isinstance(case.get("description"), str), case["id"]


@pytest.mark.parametrize("rnd", sorted(adv.CASES_DIRS))
def test_each_case_carries_what_its_oracle_reads(rnd):
    for kind, case in _cases(rnd):
        text = json.dumps({k: v for k, v in case.items() if k not in ("token", "secrets", "dangerous", "keep")},
                          ensure_ascii=False)
        for step in _steps(case):
            assert STEP_KEYS & set(step), (case["id"], sorted(step))
        if kind in ("poisoning", "recorded") and not case.get("not_person"):  # (else: provenance)
            groups = case["dangerous"]
            assert groups and all(g and all(isinstance(p, str) and p.strip() for p in g) for g in groups), case["id"]
        if kind == "poisoning" and rnd < 4:  # (round 4's go through the recorded runner)
            assert case["tools"] and all("cmd" in t for t in case["tools"]), case["id"]
        elif kind in ("recorded", "poisoning"):
            assert "payload" in case or case.get("setup") or case.get("provider"), case["id"]
        elif kind == "rendering":
            assert case["token"] in text, case["id"]  # a token no input carries can never be found
        elif kind == "credentials":
            if case.get("lookalike"):
                assert case["keep"] and all(json.dumps(v)[1:-1] in text or v in text for v in case["keep"]), case["id"]
            elif rnd >= 3:  # rounds 1-2 build some values at run time; round 3 writes each one out
                assert case["secrets"] and all(s in text for s in case["secrets"]), case["id"]
        elif kind in ("links", "damage"):
            assert case["steps"], case["id"]
        elif kind == "benign":
            assert ("payload" in case and case["query"]) or case.get("tools") or (
                rnd >= 4 and case.get("steps") and (case.get("quoted") or case.get("back"))), case["id"]
