"""Lab: a derived model file — the embedded GGUF with its Q6_K tensors stored as another type
(issue 28 item 1, session 20). Only for measuring (`lab_op_profile.py --model`): a shipped model
change would need new certificates.

This xllamacpp build repacks Q4_K weights for AVX2 (`q4_K_8x8`) but runs Q6_K ones (the 14
`ffn_down`, the 14 `attn_v` and `output`) through its generic tiled K-quant driver. Q8_0 is the
type llamafile's tinyBLAS multiplies on AVX2. Each Q6_K tensor is dequantised to float32 and
quantised to `--to` (Q8_0: 8.5 bits a weight against Q6_K's 6.56, finer, so the weights move by
Q8_0's rounding only); every other tensor and every metadata field is copied as it is.

Needs the `gguf` package, which is not a dependency of agenteval: install it outside the shared
environment, e.g. `python -m venv --system-site-packages /tmp/g && /tmp/g/bin/pip install gguf`.

    /tmp/g/bin/python bench/lab_requant.py /tmp/derived/q6k-as-q8_0.gguf --only ffn_down,attn_v,output
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter, quants

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from agenteval.models import local as local_module

ROWS = 4096  # rows dequantised at a time (output.weight alone is 151,936 rows)


def convert(data: np.ndarray, source: GGMLQuantizationType, target: GGMLQuantizationType) -> np.ndarray:
    parts = []
    for start in range(0, data.shape[0], ROWS):
        parts.append(quants.quantize(quants.dequantize(data[start:start + ROWS], source), target))
    return np.concatenate(parts)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--source", help="the GGUF to derive from (default: the embedded model)")
    p.add_argument("--to", default="Q8_0")
    p.add_argument("--only", default="", help="comma-separated name parts; default every Q6_K tensor")
    args = p.parse_args()
    source = args.source or str(local_module.model_file(None))
    target = GGMLQuantizationType[args.to]
    only = [x for x in args.only.split(",") if x]
    reader = GGUFReader(source)
    arch = str(reader.fields["general.architecture"].contents())
    writer = GGUFWriter(args.out, arch)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == GGUFValueType.ARRAY else None
        writer.add_key_value(key, field.contents(), kind, sub_type=sub)
    changed = 0
    t = time.perf_counter()
    for tensor in reader.tensors:
        kind = tensor.tensor_type
        data = np.asarray(tensor.data)
        if kind == GGMLQuantizationType.Q6_K and (not only or any(o in tensor.name for o in only)):
            data, kind = convert(data, kind, target), target
            changed += 1
        writer.add_tensor(tensor.name, data, raw_dtype=kind if kind not in (
            GGMLQuantizationType.F32, GGMLQuantizationType.F16) else None)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"{changed} tensors Q6_K -> {args.to} in {time.perf_counter() - t:.0f} s: {args.out} "
          f"({Path(args.out).stat().st_size / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
