"""String and number lexemes of JSONSchemaBench subschemas against the instances (never run by pytest).

Walks each schema and test instance (properties and items only), compiles every string subschema
with pattern/length/format and every numeric subschema with bounds through string_expr /
number_expr, runs the lazy DFA over each value as json.dumps writes it, and prints compile
outcomes, refusals, accepted/rejected counts per label and the slowest values.

Usage: python benchmarks/check_schema_values.py [path/to/jsonschemabench]
"""

import collections
import json
import os
import sys
import time

from leapgram.errors import BudgetExceededError, GrammarError, UnsupportedError
from leapgram.frontends.json_schema.context import SchemaContext
from leapgram.frontends.json_schema.numbers import number_expr
from leapgram.frontends.json_schema.strings import string_expr
from leapgram.regex.dfa import LazyDfa
from leapgram.regex.expr import ExprPool

D = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..', 'shared', 'jsonschemabench')
SK={'pattern','minLength','maxLength','format'}; NK={'minimum','maximum','exclusiveMinimum','exclusiveMaximum','multipleOf'}
def walk(schema, value, out, depth=0):
    if not isinstance(schema, dict) or depth>20: return
    t=schema.get('type')
    if isinstance(value,str) and SK & schema.keys(): out.append(('s',schema,value))
    if isinstance(value,(int,float)) and not isinstance(value,bool) and NK & schema.keys() and t in ('number','integer'): out.append(('n',schema,value))
    if isinstance(value, dict):
        for k,sub in (schema.get('properties') or {}).items():
            if k in value: walk(sub, value[k], out, depth+1)
    if isinstance(value, list) and isinstance(schema.get('items'), dict):
        for v in value: walk(schema['items'], v, out, depth+1)
outcome=collections.Counter(); feats=collections.Counter(); slow=[]; stats=collections.Counter(); ex=collections.defaultdict(list)
cache={}
for name in sorted(os.listdir(D)):
    if not name.endswith('.json'): continue
    try:
        with open(os.path.join(D,name)) as f: d=json.load(f)
    except ValueError: continue
    for t in d.get('tests',[]):
        out=[]; walk(d['schema'], t['data'], out)
        for kind, schema, v in out:
            key=(kind, json.dumps(schema,sort_keys=True))
            if key not in cache:
                ctx=SchemaContext(ExprPool())
                t0=time.perf_counter()
                try:
                    e=string_expr(ctx,schema,'') if kind=='s' else number_expr(ctx,schema,'',integer=schema.get('type')=='integer')
                    dfa=LazyDfa(ctx.pool,e); res='ok'
                except UnsupportedError as err: dfa=None; res='unsupported'; feats[(kind, err.feature if err.feature!='pattern' else 'pattern:'+str(err).split(';')[0][-50:])]+=1
                except GrammarError as err: dfa=None; res='grammar-error'; feats[(kind,str(err)[:60])]+=1
                except BudgetExceededError: dfa=None; res='budget'
                cache[key]=(dfa,time.perf_counter()-t0); outcome[(kind,res)]+=1
            dfa,_=cache[key]
            if dfa is None: continue
            text=json.dumps(v,ensure_ascii=False).encode()
            t0=time.perf_counter()
            try:
                acc=dfa.is_accepting(dfa.run(dfa.initial,text))
            except BudgetExceededError: acc='budget'
            dt=time.perf_counter()-t0
            slow.append((dt, name, key[1][:100]))
            stats[(kind, 'valid' if t['valid'] else 'invalid', acc)]+=1
            if t['valid'] and acc is not True and len(ex[kind])<12: ex[kind].append((name, key[1][:120], text[:60]))
print('compile outcomes', dict(outcome))
print('refusals', feats.most_common(25))
print('instance results', dict(stats))
for k in ex: print(k, *ex[k], sep='\n  ')
slow.sort(reverse=True); print('slowest', *slow[:6], sep='\n  ')
print('compile max', max(c[1] for c in cache.values()))
