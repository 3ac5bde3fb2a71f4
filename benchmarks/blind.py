"""What blind invitations cost: the collector's blind signature and the page's blind + finalize.

Run: python benchmarks/blind.py [--runs 200] [--pyodide]
Prints, for a 2048-bit key (what `rrsite invite --blind` makes): the collector's BlindSign
(rrsite/collect/invitations/blindkey.py: CRT with base blinding, then the RFC's verification)
against `cryptography`'s own RSASSA-PSS signature with the same key (the baseline: one private-key
operation in OpenSSL), token verification, and the page's side (rrsite.core.blind: blind, then
finalize with its PSS verification) in CPython and, with --pyodide, inside Pyodide under Node.
Medians over `--runs` calls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rrsite.collect.invitations.blindkey import create_key  # noqa: E402
from rrsite.core import blind as rb  # noqa: E402

NODE_SCRIPT = """
import { loadPyodide } from "pyodide";
import { readFileSync } from "node:fs";
const [zipPath, keyText, runs] = process.argv.slice(2);
const pyodide = await loadPyodide({ packages: [] });
pyodide.FS.writeFile("/lib/core.zip", new Uint8Array(readFileSync(zipPath)));
pyodide.runPython("import sys; sys.path.insert(0, '/lib/core.zip')");
const blind = pyodide.pyimport("rrsite.core.blind");
const times = [];
let state = null;
for (let i = 0; i < Number(runs); i += 1) {
  const started = performance.now();
  state = JSON.parse(blind.blind_json(keyText, "honor-code"));
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ blind_ms: times[Math.floor(times.length / 2)], state }));
"""


def median_ms(work, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--pyodide", action="store_true", help="also time blinding in Pyodide")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        signer = create_key(Path(folder) / "k.pem")
        made_s = time.perf_counter() - started
    key_text = json.dumps(signer.public_json())
    public = rb.key_from_json(json.loads(key_text))
    prepared = rb.prepare(rb.token_message("honor-code"))
    blinded, inv = rb.blind(public, prepared)
    blind_sig = signer.blind_sign(blinded)
    signature = rb.finalize(public, prepared, blind_sig, inv)
    pss = padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=48)
    private = signer._private_key

    ours = median_ms(lambda: signer.blind_sign(blinded), args.runs)
    library = median_ms(lambda: private.sign(prepared, pss, hashes.SHA384()), args.runs)
    verify = median_ms(lambda: signer.verify(prepared, signature), args.runs)
    client_blind = median_ms(lambda: rb.blind(public, prepared), args.runs)
    client_final = median_ms(lambda: rb.finalize(public, prepared, blind_sig, inv), args.runs)
    print(f"key: RSA {public.n.bit_length()} bits, made in {made_s:.2f} s")
    print(f"collector BlindSign (rrsite, CRT + base blinding + check): {ours:.2f} ms")
    print(f"cryptography RSASSA-PSS sign, same key (baseline):       {library:.2f} ms")
    print(f"  ratio rrsite / cryptography: {ours / library:.2f}x")
    print(f"collector token verification (cryptography):             {verify:.3f} ms")
    print(f"page blind (CPython):    {client_blind:.2f} ms")
    print(f"page finalize (CPython): {client_final:.2f} ms")
    if args.pyodide:
        from rrsite.survey.bundle import core_zip

        with tempfile.TemporaryDirectory() as folder:
            zip_path = Path(folder) / "core.zip"
            zip_path.write_bytes(core_zip())
            out = subprocess.run(
                ["node", "--input-type=module", "-"], input=NODE_SCRIPT.replace(
                    "process.argv.slice(2)", json.dumps([str(zip_path), key_text,
                                                         str(min(args.runs, 50))])),
                capture_output=True, text=True, cwd=ROOT, check=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        state = result["state"]
        check = rb.finalize_json(key_text, state["msg"], rb.b64(signer.blind_sign(
            rb.unb64(state["blinded_msg"]))), state["inv"])
        assert rb.unb64(json.loads(check)["sig"])
        print(f"page blind (Pyodide, Node): {result['blind_ms']:.2f} ms "
              f"({result['blind_ms'] / client_blind:.1f}x CPython); its token finalizes here")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
