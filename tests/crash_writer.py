"""Child process for the crash tests: writes transactions until it is killed, printing
``ack N`` after each commit returns (= acknowledged to the writer)."""

from __future__ import annotations

import random
import sys

from walsender_proxy.lake import Lake, LakeError, LakeSettings, Sql


def main(path: str, start: int, seed: int) -> None:
    rnd = random.Random(seed)
    lake = Lake(path, LakeSettings(fold_commits=40, fold_interval=0.2, checkpoint_rows=3000))
    if lake.catalog.find_table("public", "g") is None:
        with lake.begin() as tx:
            tx.create_table(
                "g",
                [("grp", "int"), ("i", "int"), ("v", "int"), ("pad", "text")],
                primary_key=["grp", "i"],
            )
    print("ready", flush=True)
    g = start
    while True:
        g += 1
        r = rnd.random()
        tx = lake.begin()
        try:
            if r < 0.15 and g > start + 2:  # bump every row of an older group, all at once
                old = rnd.randrange(max(start, g - 50), g)
                tx.update("g", {"v": Sql("v + 1")}, {"grp": old})
                tx.insert("g", [{"grp": g, "i": 0, "v": 0, "pad": "u"}])
            elif r < 0.2:  # a group abandoned at a savepoint, then committed
                tx.insert("g", [{"grp": g, "i": i, "v": 0, "pad": "x"} for i in range(3)])
                tx.savepoint("s")
                tx.insert("g", [{"grp": g, "i": 99, "v": 0, "pad": "gone"}])
                tx.rollback_to("s")
            else:
                n = 2000 if r > 0.97 else 3
                tx.insert("g", [{"grp": g, "i": i, "v": 0, "pad": "p" * 50} for i in range(n)])
            tx.commit()
        except LakeError:
            tx.abort()
            continue
        print(f"ack {g}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
