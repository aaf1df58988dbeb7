#!/usr/bin/env python3
# Converts the reference OpenAPI document (YAML) into the JSON that the test
# support validates responses and events against (test/support/openapi.ts).
# Node has no YAML parser among our dependencies, so this runs once, by hand,
# whenever the reference document changes:
#
#   python3 scripts/openapi-to-json.py ../shared/reference/zulip-openapi-10.2.yaml \
#       > test/support/zulip-openapi-10.2.json
#
# Only what validation needs is kept: the responses of every path and the
# components; prose (descriptions, examples) is dropped to keep the file small.
# The renames and what is newer than the document live in the overlay
# (test/support/openapi-overlay.ts), not here: this file is the document as is.
import json
import sys

import yaml

DROP = {'description', 'example', 'examples', 'summary', 'x-curl-examples-parameters', 'x-parameter-description'}


def strip(node):
    if isinstance(node, dict):
        # Property names may collide with the prose keys (a property called
        # `description`): only drop them where they are keywords.
        out = {}
        for k, v in node.items():
            if k == 'properties' and isinstance(v, dict):
                out[k] = {name: strip(s) for name, s in v.items()}
            elif k in DROP:
                continue
            else:
                out[k] = strip(v)
        return out
    if isinstance(node, list):
        return [strip(x) for x in node]
    return node


def main():
    doc = yaml.safe_load(open(sys.argv[1], encoding='utf-8'))
    paths = {}
    for path, methods in doc['paths'].items():
        for method, op in methods.items():
            if isinstance(op, dict) and 'responses' in op:
                paths.setdefault(path, {})[method] = {'responses': strip(op['responses'])}
    components = {k: strip(doc['components'][k]) for k in ('schemas', 'responses')}
    out = {'openapi': doc['openapi'], 'source': sys.argv[1].rsplit('/', 1)[-1], 'paths': paths, 'components': components}
    json.dump(out, sys.stdout, indent=1, sort_keys=False, ensure_ascii=False)
    sys.stdout.write('\n')


main()
