#!/usr/bin/env python3
"""Copies a sample of PyTorch's native_functions.yaml entries, verbatim, after the project's
spec: issue 10's promise is that any entry can be copied into specs/native_functions.yaml and
generate without edits. The sample covers every argument and return type the PyTorch file uses
(each type with its optional and list forms as written), every dispatch form (structured,
structured_delegate, autogen, no dispatch, only keys tensorgen does not compile, tags), and is
topped up to at least --min entries; entries the project already has are skipped, and an
entry's structured_delegate target comes with it.

    sample_pytorch_entries.py PYTORCH_NATIVE PROJECT_NATIVE OUT [--min N]

Prints one line: how many entries were copied and how many type forms they cover."""
import re
import sys


def entries(text):
    """(full name, entry text) for each top-level `- func:` entry, comments dropped."""
    blocks, cur = [], None
    for line in text.splitlines():
        if line.startswith('- func:'):
            if cur:
                blocks.append(cur)
            cur = [line]
        elif cur is not None and line.strip() and not line.lstrip().startswith('#'):
            if line[0] in ' \t':
                cur.append(line)
    if cur:
        blocks.append(cur)
    out = []
    for b in blocks:
        m = re.match(r'- func:\s*([A-Za-z0-9_.]+)\(', b[0])
        if m:
            out.append((m.group(1), '\n'.join(b)))
    return out


def type_forms(entry):
    """The argument and return types of an entry's schema, names, defaults and aliases dropped."""
    func = re.match(r'- func:\s*(.*)', entry.splitlines()[0]).group(1)
    args = func[func.index('(') + 1:func.rindex(') ->')]
    rets = func[func.rindex('->') + 2:].strip()
    forms = set()
    for part in re.split(r',(?![^\[]*\])', args):
        part = part.strip()
        if not part or part == '*':
            continue
        t = part.rsplit(' ', 1)[0] if ' ' in part else part
        forms.add('arg ' + re.sub(r'\([a-z!\->* ]*\)', '', t))
    rets = rets[1:-1] if rets.startswith('(') else rets
    for part in rets.split(','):
        part = part.strip()
        t = part.split(' ')[0] if part else '()'
        forms.add('ret ' + re.sub(r'\([a-z!\->* ]*\)', '', t))
    return forms


def shape(entry):
    """The dispatch form of an entry, as one of a few words."""
    words = set()
    for w in ('structured: True', 'structured_delegate', 'autogen', 'tags', 'dispatch'):
        if w in entry:
            words.add(w.split(':')[0])
    if 'dispatch' not in words and 'structured_delegate' not in words:
        words.add('implicit composite')
    keys = re.findall(r'^    ([A-Za-z, ]+):', entry, re.M)
    compiled = {'CPU', 'CUDA', 'CompositeImplicitAutograd', 'CompositeExplicitAutograd',
                'CompositeExplicitAutogradNonFunctional'}
    flat = {k.strip() for ks in keys for k in ks.split(',')}
    if 'dispatch' in words and not flat & compiled:
        words.add('only other keys')
    return words


def main():
    args = sys.argv[1:]
    minimum = 50
    if '--min' in args:
        i = args.index('--min')
        minimum = int(args[i + 1])
        del args[i:i + 2]
    pytorch, project, out = args
    theirs = entries(open(pytorch).read())
    project_text = open(project).read()
    ours = {name for name, _ in entries(project_text)}
    by_name = dict(theirs)
    # Names the project's entries already synthesise (autogen) must not be copied either.
    for m in re.finditer(r'autogen:\s*(.*)', project_text):
        ours.update(n.strip() for n in m.group(1).split(','))

    def autogen_names(text):
        m = re.search(r'autogen:\s*(.*)', text)
        return {n.strip() for n in m.group(1).split(',')} if m else set()

    candidates = [(n, t) for n, t in theirs if n not in ours and not autogen_names(t) & ours]
    chosen, covered = [], set()

    def take(name, text):
        if name in (c[0] for c in chosen):
            return
        d = re.search(r'structured_delegate:\s*(\S+)', text)
        if d and d.group(1) not in ours:
            if d.group(1) not in by_name:
                return
            take(d.group(1), by_name[d.group(1)])
        chosen.append((name, text))
        covered.update(type_forms(text) | {'shape ' + s for s in shape(text)})

    for name, text in candidates:
        if (type_forms(text) | {'shape ' + s for s in shape(text)}) - covered:
            take(name, text)
    step = max(1, len(candidates) // minimum)
    for name, text in candidates[::step]:
        if len(chosen) >= minimum:
            break
        take(name, text)
    with open(out, 'w') as f:
        f.write(project_text.rstrip('\n') + '\n\n# ---- copied verbatim from ' + pytorch + '\n\n')
        f.write('\n\n'.join(t for _, t in chosen) + '\n')
    forms = sorted(c for c in covered if not c.startswith('shape '))
    print(f'{len(chosen)} entries copied, covering {len(forms)} type forms and '
          f'{len(covered) - len(forms)} dispatch forms')


main()
