// The Python side of the Python reward sandbox (python-host.ts runs it in Pyodide before any reward code).
// It checks and compiles the reward file, builds the reward's restricted world (a few builtins, `math`, a
// small `numpy` shim, no way to import anything else), seals the interpreter (an audit hook that refuses
// every audited operation once the file has run, the JavaScript bridge modules dropped) and then keeps the
// per-env episode state and steps every env of a batch in one call, as the TypeScript driver does.
//
// Why each wall is there (an attacker's view):
// - `import js`, `import os`, `__import__('os')`, `open`: the reward's builtins have no `open`, `eval`,
//   `exec`, `compile`, `getattr`, `globals`, `vars`; its `__import__` hands out only the modules below.
// - `().__class__.__base__.__subclasses__()`, `f.__globals__`, `gen.gi_frame.f_back.f_globals`: the file
//   is refused before it runs when it names an attribute that starts with `_` or reaches frames, code or
//   tracebacks (`gi_`, `f_`, `tb_`, `co_`, `cr_`, `ag_`, `mro`), and names starting with `__`.
// - anything that slips past those: the audit hook refuses `open`, `import`, `compile`, `exec`, the frame
//   and code attributes (`object.__getattr__`), `os.*`, `subprocess.*`, `socket.*`, `ctypes.*`, `gc.*` …
//   every audit event, in fact, outside the driver's own error reporting.
// - `except:` around an endless loop would swallow the time limit's KeyboardInterrupt: a bare `except:` is
//   compiled as `except Exception:` (KeyboardInterrupt is not an Exception), and the reward's builtins have
//   no BaseException or KeyboardInterrupt to name.
// The source is a plain template string without backticks, dollar-braces or backslashes: the Python as it is,
// but for the @NAME@ marks where pythonDriver puts what it generates from the observation's description.
import type { ObservationWire, WireField } from '../schema';
/**
 * The builtins a Python reward has (python-driver.ts gives exactly these; `print` discards its output): no
 * open, eval, exec, compile, getattr, globals, vars, input, exit, BaseException or KeyboardInterrupt.
 */
export const PYTHON_BUILTINS: readonly string[] = (
  'abs all any bin bool bytearray bytes callable chr complex dict divmod enumerate filter float format frozenset hash ' +
  'hex int isinstance issubclass iter len list map max min next object oct ord pow print range repr reversed round set ' +
  'slice sorted str sum tuple type zip ArithmeticError AssertionError AttributeError Exception IndexError KeyError ' +
  'LookupError NameError NotImplementedError OverflowError RecursionError RuntimeError StopIteration TypeError ' +
  'ValueError ZeroDivisionError MemoryError True False None'
).split(' ');

const PYTHON_DRIVER = `
def make_driver(reward_file, error_chars, sparse_weight, dense_weight, call_limit_ms, builtin_names, coverage):
    import ast, sys, math, time, types, builtins, json

    perf = time.perf_counter
    trusted = [True]
    blocked_attr_prefixes = ('_', 'gi_', 'cr_', 'ag_', 'f_', 'tb_', 'co_')
    blocked_attrs = {'mro'}

    def cap(text):
        text = str(text)
        if len(text) <= error_chars:
            return text
        return text[:error_chars] + ' ... [' + str(len(text) - error_chars) + ' more characters cut]'

    # --- the numpy shim: what reward code uses of numpy, on floats and lists of floats -----------------
    def _flat(x):
        if isinstance(x, (list, tuple)):
            out = []
            for v in x:
                out.extend(_flat(v))
            return out
        return [x]

    def _map(f, x):
        if isinstance(x, (list, tuple)):
            return [_map(f, v) for v in x]
        return f(x)

    def np_sign(x):
        return _map(lambda v: (v > 0) - (v < 0) if v == v else v, x)

    def np_clip(x, lo, hi):
        return _map(lambda v: min(max(v, lo), hi), x)

    def np_mean(x):
        xs = _flat(x)
        if not xs:
            raise ValueError('mean of an empty sequence')
        return sum(xs) / len(xs)

    def np_norm(x):
        return math.sqrt(sum(v * v for v in _flat(x)))

    def np_array(x, dtype=None):
        return list(x) if isinstance(x, (list, tuple)) else x

    def np_min(x):
        return min(_flat(x))

    def np_max(x):
        return max(_flat(x))

    numpy = types.SimpleNamespace(
        sign=np_sign, clip=np_clip, sqrt=lambda x: _map(math.sqrt, x), abs=lambda x: _map(abs, x),
        exp=lambda x: _map(math.exp, x), log=lambda x: _map(math.log, x), floor=lambda x: _map(math.floor, x),
        mean=np_mean, sum=lambda x: sum(_flat(x)), min=np_min, max=np_max, array=np_array,
        linalg=types.SimpleNamespace(norm=np_norm), pi=math.pi, inf=math.inf, e=math.e,
        float32=float, float64=float, int32=int, int64=int,
    )

    class Hint:
        def __getitem__(self, item):
            return self
        def __call__(self, *args, **kwargs):
            return self

    typing = types.SimpleNamespace(**{n: Hint() for n in ('Any', 'Dict', 'List', 'Tuple', 'Optional', 'Union', 'Callable', 'Sequence', 'Mapping', 'Set', 'Iterable')})
    modules = {'math': math, 'numpy': numpy, 'typing': typing}
    # LLM-written rewards put "from __future__ import annotations" first; it only changes compilation.
    allowed_modules = set(modules) | {'__future__'}

    def reward_import(name, globals=None, locals=None, fromlist=(), level=0):
        top = str(name).split('.')[0]
        if level or top not in modules:
            raise ImportError('the reward sandbox has no module ' + repr(str(name)) + '; available: math, numpy (a shim: sign, clip, sqrt, abs, exp, log, floor, mean, sum, min, max, array, linalg.norm), typing')
        return modules[top]

    reward_builtins = {n: getattr(builtins, n) for n in builtin_names if n != 'print'}
    reward_builtins['print'] = lambda *args, **kwargs: None
    reward_builtins['__import__'] = reward_import
    reward_builtins['__build_class__'] = builtins.__build_class__

    class Refused(Exception):
        def __init__(self, node, message):
            self.node = node
            self.message = message

    class Check(ast.NodeTransformer):
        def visit_Attribute(self, node):
            if node.attr.startswith(blocked_attr_prefixes) or node.attr in blocked_attrs:
                raise Refused(node, 'the reward sandbox does not allow the attribute .' + node.attr + ' (attributes starting with _ and those of frames, code and tracebacks are closed)')
            return self.generic_visit(node)

        def visit_Name(self, node):
            if node.id.startswith('__'):
                raise Refused(node, 'the reward sandbox does not allow the name ' + node.id)
            return node

        def visit_Global(self, node):
            for n in node.names:
                if n.startswith('__'):
                    raise Refused(node, 'the reward sandbox does not allow the name ' + n)
            return node

        def visit_MatchClass(self, node):
            for a in node.kwd_attrs:
                if a.startswith(blocked_attr_prefixes):
                    raise Refused(node, 'the reward sandbox does not allow the attribute .' + a)
            return self.generic_visit(node)

        def visit_Import(self, node):
            for a in node.names:
                if a.name.split('.')[0] not in allowed_modules:
                    raise Refused(node, 'the reward sandbox has no module ' + repr(a.name) + '; available: math, numpy (a shim), typing')
            return node

        def visit_ImportFrom(self, node):
            if node.level or (node.module or '').split('.')[0] not in allowed_modules:
                raise Refused(node, 'the reward sandbox has no module ' + repr(node.module or '.') + '; available: math, numpy (a shim), typing')
            for a in node.names:
                if a.name.startswith('_') and node.module != '__future__':
                    raise Refused(node, 'the reward sandbox does not allow importing ' + a.name)
            return node

        def visit_ExceptHandler(self, node):
            if node.type is None:
                node.type = ast.copy_location(ast.Name(id='Exception', ctx=ast.Load()), node)
            return self.generic_visit(node)

    # --- coverage (probes only): which statement ran in which call ---------------------------------------
    # Before every statement inside a function the file calls MARK(k), k the statement's index in located
    # (parents before their children, as the TypeScript instrumentation numbers them); the name starts with
    # __, which the file itself cannot name. Counted per env when the call returns: the calls in which each
    # statement ran, those of them that paid more than 0, and the sum of those returns.
    mark_name = '__rewardsmith_ran'
    located = []
    ran_in = []
    touched = []
    call_number = [0]
    last_statement = [-1]
    counts = {}

    def mark(k):
        if ran_in[k] != call_number[0]:
            ran_in[k] = call_number[0]
            touched.append(k)
        last_statement[0] = k

    def instrument(tree, source):
        lines = source.split(chr(10))

        def column(line, offset):
            # ast's columns count UTF-8 bytes; the editor's, characters.
            text = lines[line - 1] if 0 < line <= len(lines) else ''
            return len(text.encode('utf-8')[:offset].decode('utf-8', 'replace')) + 1

        def block(stmts, inside):
            out = []
            for i, st in enumerate(stmts):
                definition = isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                docstring = i == 0 and isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)
                if inside and not definition and not docstring and not isinstance(st, ast.Pass):
                    k = len(located)
                    located.append([st.lineno, column(st.lineno, st.col_offset), st.end_lineno, column(st.end_lineno, st.end_col_offset)])
                    call = ast.Call(func=ast.Name(id=mark_name, ctx=ast.Load()), args=[ast.Constant(value=k)], keywords=[])
                    out.append(ast.copy_location(ast.Expr(value=call), st))
                children(st, inside or isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)))
                out.append(st)
            return out

        def children(node, inside):
            for field in ('body', 'orelse', 'finalbody'):
                v = getattr(node, field, None)
                if isinstance(v, list) and v and isinstance(v[0], ast.stmt):
                    setattr(node, field, block(v, inside))
            for h in getattr(node, 'handlers', None) or ():
                h.body = block(h.body, inside)
            for c in getattr(node, 'cases', None) or ():
                c.body = block(c.body, inside)

        tree.body = block(tree.body, False)
        ran_in.extend([-1] * len(located))
        return tree

    def count_call(e, r):
        c = counts.get(e)
        if c is None:
            n = len(located)
            c = counts[e] = ([0.0] * n, [0.0] * n, [0.0] * n)
        runs, paid_runs, paid_sum = c
        for k in touched:
            runs[k] += 1
            if r > 0:
                paid_runs[k] += 1
                paid_sum[k] += r

    def coverage_counts():
        n = len(located)
        envs = max(counts) + 1 if counts else 0
        flat = ([], [], [])
        for e in range(envs):
            c = counts.get(e) or ([0.0] * n, [0.0] * n, [0.0] * n)
            for i in range(3):
                flat[i].extend(c[i])
        return {'statements': n, 'runs': flat[0], 'paidRuns': flat[1], 'paidSum': flat[2]}

    # --- locating errors in the reward file ------------------------------------------------------------
    def where(err):
        # Innermost frame of the reward file: its line and column (1-based), read with the audit hook open.
        trusted[0] = True
        try:
            line = None
            col = None
            tb = err.__traceback__
            while tb is not None:
                code = tb.tb_frame.f_code
                if code.co_filename == reward_file:
                    line = tb.tb_lineno
                    col = None
                    try:
                        positions = list(code.co_positions())
                        index = tb.tb_lasti // 2
                        if 0 <= index < len(positions) and positions[index][0] == line and positions[index][2] is not None:
                            col = positions[index][2] + 1
                    except Exception:
                        col = None
                tb = tb.tb_next
            return line, col
        finally:
            trusted[0] = False

    def failure(kind, err, env=None, entry=None, fatal=False, message=None):
        line, col = where(err) if err is not None else (None, None)
        if message is None:
            try:
                text = str(err)
            except Exception:
                text = 'an unprintable error'
            message = type(err).__name__ + (': ' + text if text else '')
        out = {'kind': kind, 'message': cap(message), 'env': env, 'fatal': fatal}
        if line is not None:
            out['line'] = line
            out['column'] = col or 1
        if entry is not None:
            out['entry'] = entry
        return out

    def describe(v):
        if v is None:
            return 'None'
        if isinstance(v, bool):
            return 'the bool ' + str(v)
        if isinstance(v, (int, float)):
            return str(v)
        if isinstance(v, str):
            return 'the string ' + repr(v[:40] + ('...' if len(v) > 40 else ''))
        return 'a value of type ' + type(v).__name__

    class BadReturn(Exception):
        pass

    def checked(fn, v):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise BadReturn(fn + ' must return a finite number, got ' + describe(v))
        return v

    def sign(v):
        return (v > 0) - (v < 0)

    # --- the audit hook: once the file has run, every audited operation is refused ----------------------
    def audit(event, args):
        if trusted[0]:
            return
        # The one exec the driver itself does: the reward file's top level, once.
        if event == 'exec' and 'ran' not in bound and args and args[0] is bound.get('code'):
            bound['ran'] = True
            return
        raise RuntimeError('the reward sandbox does not allow ' + event)

    states = {}
    names = []
    bound = {}
    # The function running now ('dense' or 'sparse' in a dense/sparse file), for errors without a line.
    current = ['reward_function']
    # Reading the clock costs ~4.7 us in Pyodide, a quarter of a typical call: calls are timed one by one
    # only after a step that took longer in all than one call may (a slow call shows in the step's total).
    time_calls = [False]

    def open_file(source, attack):
        # Compiles and runs the file's top level. Returns None, or a failure dict.
        try:
            tree = ast.parse(source, reward_file)
            tree = Check().visit(tree)
            if coverage:
                tree = instrument(tree, source)
            ast.fix_missing_locations(tree)
            code = compile(tree, reward_file, 'exec', dont_inherit=True)
        except SyntaxError as e:
            col = e.offset or 1
            return {'kind': 'compile', 'message': cap(type(e).__name__ + ': ' + str(e.msg)), 'env': None, 'line': e.lineno or 1, 'column': col}
        except Refused as e:
            return {'kind': 'contract', 'message': cap(e.message), 'env': None, 'line': getattr(e.node, 'lineno', 1), 'column': getattr(e.node, 'col_offset', 0) + 1}
        except (RecursionError, MemoryError) as e:
            return {'kind': 'compile', 'message': 'the file is nested too deeply for the compiler (' + type(e).__name__ + ')', 'env': None, 'line': 1, 'column': 1}
        namespace = {'__builtins__': reward_builtins, '__name__': 'reward'}
        if coverage:
            namespace[mark_name] = mark
        bound['namespace'] = namespace
        bound['code'] = code
        bound['attack'] = attack
        return None

    def seal():
        # Drops the JavaScript bridge from the import system and installs the audit hook; from here on the
        # interpreter only runs the reward and this driver.
        for name in list(sys.modules):
            if name == 'js' or name.startswith(('pyodide', '_pyodide', 'js.', 'micropip')):
                del sys.modules[name]
        sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != 'JsFinder']
        sys.addaudithook(audit)
        trusted[0] = False

    def run_top_level():
        try:
            exec(bound['code'], bound['namespace'])
        except KeyboardInterrupt as e:
            return failure('timeout', e, fatal=True, message='')
        except MemoryError as e:
            return failure('memory', e, fatal=True)
        except BaseException as e:
            return failure('throw', e)
        ns = bound['namespace']
        attack = bound['attack']
        f = ns.get('reward_function')
        if f is not None:
            if not callable(f):
                return {'kind': 'contract', 'message': 'reward_function is not a function when the file has run', 'env': None}
            if attack:
                bound['call'] = lambda @FIELDS@, s: f(@ALL_ARGS@)
            else:
                bound['call'] = lambda @FIELDS@, s: f(@BASIC_ARGS@)
            bound['entry'] = 'reward_function'
            return None
        d = ns.get('dense')
        sp = ns.get('sparse')
        if not callable(d) or not callable(sp):
            return {'kind': 'contract', 'message': 'dense and sparse must be functions when the file has run', 'env': None}
        trusted[0] = True
        try:
            nd = d.__code__.co_argcount
            ns_ = sp.__code__.co_argcount
        except AttributeError:
            return {'kind': 'contract', 'message': 'dense and sparse must be plain functions (def)', 'env': None}
        finally:
            trusted[0] = False

        def both(@FIELDS@, s):
            args = (@ALL_ARGS@,)
            current[0] = 'dense'
            dv = checked('dense', d(*args[:nd]))
            current[0] = 'sparse'
            sv = checked('sparse', sp(*args[:ns_]))
            parts[0] = dv
            parts[1] = sv
            return sign(sv) * sparse_weight + sign(dv) * dense_weight

        bound['call'] = both
        bound['entry'] = 'dense'
        return None

    # An env's state: [previous nearest blocks, position history, GLOBAL_DATA, and for input swaps (probes):
    # its last observation, the one before, the previous nearest blocks its last call got, its swap or None].
    # An observation: the tuple of its fields in the schema's order (@FIELDS@).
    parts = [0.0, 0.0]
    swapping = [False]

    def begin(text):
        try:
            begin_all(text)
        except BaseException as err:
            return {'kind': 'throw', 'message': cap('the sandbox driver failed: ' + type(err).__name__ + ': ' + str(err)), 'env': None, 'fatal': True}

    def begin_all(text):
        # JSON {envs, obs, swaps?}: the first observation of each env's episode; an env's swap names an env begun before it.
        m = json.loads(text)
        swaps = m.get('swaps') or [None] * len(m['envs'])
        for e, o, w in zip(m['envs'], m['obs'], swaps):
            first = (@BEGIN_FIELDS@)
            states[e] = [o['nearest'], [o['position']], {}, first, first, o['nearest'], None]
            if w:
                states[e][6] = {'parameter': w['parameter'], 'donor': w['donor'], 'positions': [list(states[w['donor']][3][@POSITION@])]}
                swapping[0] = True

    def copy_vectors(d):
        return {k: list(v) for k, v in d.items()}

    def swapped(o, s, e):
        # The call's arguments with the swap's parameter from the donor env's current call (copied: the reward
        # cannot change the donor's episode); a donor that is the env itself means its own episode one step
        # apart (current and previous nearest blocks trade places, the other inputs are the previous call's).
        w = s[6]
        own = w['donor'] == e
        donor = states[w['donor']]
        d = s[4] if own else donor[3]
        fields = list(o)
        w['positions'].append(list(d[@POSITION@]))
        state = [s[0], s[1], s[2]]
        p = w['parameter']
@SWAP_CASES@
        return (*fields, state)

    def step(new_names, data, count, envs):
        try:
            return step_all(new_names, data, count, None if envs is None else envs.to_py())
        except KeyboardInterrupt:
            # The time limit fired between two reward calls (in the driver's own unpacking).
            return {'kind': 'timeout', 'message': '', 'env': None, 'fatal': True}
        except MemoryError:
            return {'kind': 'memory', 'message': 'MemoryError', 'env': None, 'fatal': True}
        except BaseException as err:
            return {'kind': 'throw', 'message': cap('the sandbox driver failed: ' + type(err).__name__ + ': ' + str(err)), 'env': None, 'fatal': True}

    def step_all(new_names, packed, count, envs):
        # new_names and packed arrive as JavaScript arrays (proxies); they become Python values here and
        # never reach the reward.
        names.extend(str(n) for n in new_names)
        data = packed.to_py().tolist()
        call = bound['call']
        entry = bound['entry']
        out = []
        append = out.append
        p = 0
        slowest = -1.0
        slowest_env = -1
        timed = time_calls[0]
        step_start = perf()
        detail = {'last': [], 'dense': [], 'sparse': []} if coverage else None
        swaps = swapping[0]
        for k in range(count):
            e = k if envs is None else envs[k]
            s = states.get(e)
            if s is None:
                return {'kind': 'contract', 'env': e, 'message': 'no episode has begun for env ' + str(e) + ' (call beginEpisodes first)'}
@DECODE@
            s[1].append(f_position)
            current[0] = entry
            if coverage:
                call_number[0] += 1
                touched.clear()
                last_statement[0] = -1
            if swaps:
                o = (@FIELDS@,)
                s[4] = s[3]
                s[3] = o
                s[5] = s[0]
            if timed:
                t0 = perf()
            try:
                if swaps and s[6] is not None:
                    try:
                        r = call(*swapped(o, s, e))
                        if not ((type(r) is float and r - r == 0.0) or type(r) is int):
                            r = math.nan
                    except Exception:
                        r = math.nan  # a swapped input that makes the reward fail changed its result; the replay goes on
                else:
                    r = call(@FIELDS@, s)
            except BadReturn as err:
                out_ = {'kind': 'bad-return', 'env': e, 'entry': current[0], 'message': str(err)}
                if coverage:
                    out_['statement'] = last_statement[0]
                return out_
            except KeyboardInterrupt as err:
                return failure('timeout', err, env=e, entry=current[0], fatal=True, message='')
            except MemoryError as err:
                return failure('memory', err, env=e, entry=current[0], fatal=True)
            except BaseException as err:
                return failure('throw', err, env=e, entry=current[0])
            if timed:
                took = perf() - t0
                if took > slowest:
                    slowest = took
                    slowest_env = e
            t = type(r)
            if not ((t is float and (r - r == 0.0 or (swaps and s[6] is not None))) or t is int):
                out_ = {'kind': 'bad-return', 'env': e, 'entry': entry, 'message': 'reward must be a finite number, got ' + describe(r)}
                if coverage:
                    out_['statement'] = last_statement[0]
                return out_
            s[0] = f_nearest
            append(r)
            if coverage:
                count_call(e, r)
                detail['last'].append(last_statement[0])
                detail['dense'].append(parts[0])
                detail['sparse'].append(parts[1])
        time_calls[0] = (perf() - step_start) * 1000 > call_limit_ms
        result = {'values': out, 'slowest_ms': slowest * 1000, 'slowest_env': slowest_env, 'entry': entry}
        if detail is not None:
            if entry != 'dense':
                del detail['dense']
                del detail['sparse']
            result['detail'] = detail
        return result

    return types.SimpleNamespace(
        open_file=open_file, seal=seal, run_top_level=run_top_level, begin=begin, step=step,
        statements=lambda: located, coverage=coverage_counts,
    )
`;

/** A name generated code may use as it is (the schema's field and parameter names are such names). */
function plainName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`the observation name ${JSON.stringify(name)} is not a plain identifier`);
  return name;
}

/** Reads a field into f_<name> from data at p (a list of floats), in the layout the encoder writes (index.ts ObservationEncoder). */
function decodeField(f: WireField): string[] {
  const local = `f_${plainName(f.name)}`;
  const number = (at: string) => (f.integer ? `int(data[${at}])` : `data[${at}]`);
  const value = (at: number) =>
    f.vector ? (f.integer ? `[int(x) for x in data[p + ${at}:p + ${at + f.vector}]]` : `data[p + ${at}:p + ${at + f.vector}]`) : number(`p + ${at}`);
  if (f.dict)
    return [
      `${local} = {}`,
      'n = int(data[p]); p += 1',
      'for _ in range(n):',
      `    ${local}[names[int(data[p])]] = ${value(1)}`,
      `    p += ${1 + Math.max(1, f.vector)}`,
    ];
  return [`${local} = ${value(0)}`, `p += ${Math.max(1, f.vector)}`];
}

/** A copy of a field's value that the reward of a swapped env may change without changing the donor's episode. */
function copyOf(f: WireField, expr: string): string {
  if (f.dict) return f.vector ? `copy_vectors(${expr})` : `dict(${expr})`;
  return f.vector ? `list(${expr})` : expr;
}

/**
 * The Python driver's source for this observation: its decoder, the probes' swaps and the reward's argument lists
 * are generated from the schema's description (observationWire), the rest is written out above. The driver's
 * episode state per env is [previous nearest blocks, the position history, GLOBAL_DATA, …]; an observation is
 * the tuple of its fields in the description's order.
 */
export function pythonDriver(wire: ObservationWire): string {
  const index = (name: string) => {
    const i = wire.fields.findIndex((f) => f.name === name);
    if (i < 0) throw new Error(`the observation has no field ${name}`);
    return i;
  };
  const STATE = { previous: 's[0]', history: 's[1]', memory: 's[2]' } as const;
  const args = (parameters: ObservationWire['parameters']) =>
    parameters.map(({ source }) => ('field' in source ? `f_${plainName(source.field)}` : STATE[source.episode])).join(', ');
  const swapCases = wire.parameters.flatMap(({ name, source }) => {
    if ('field' in source) {
      const i = index(source.field);
      return [[name, `fields[${i}] = ${copyOf(wire.fields[i]!, `d[${i}]`)}`]];
    }
    if (source.episode === 'previous') return [[name, `state[0] = copy_vectors(o[${index('nearest')}] if own else donor[5])`]];
    if (source.episode === 'history') return [[name, "state[1] = w['positions']"]];
    return []; // the reward's own memory is not an input a swap tests
  });
  const generated: Record<string, string> = {
    DECODE: wire.fields
      .flatMap(decodeField)
      .map((line) => `            ${line}`)
      .join('\n'),
    FIELDS: wire.fields.map((f) => `f_${plainName(f.name)}`).join(', '),
    BEGIN_FIELDS: wire.fields.map((f) => `o['${plainName(f.name)}'], `).join(''),
    POSITION: String(index('position')),
    SWAP_CASES: swapCases.map(([name, code], k) => `        ${k === 0 ? 'if' : 'elif'} p == '${plainName(name!)}':\n            ${code}`).join('\n'),
    ALL_ARGS: args(wire.parameters),
    BASIC_ARGS: args(wire.parameters.filter((p) => !p.attackOnly)),
  };
  return PYTHON_DRIVER.replace(/@([A-Z_]+)@/g, (mark, name: string) => generated[name] ?? mark);
}
