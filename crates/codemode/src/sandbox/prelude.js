// Installs the sandbox's globals: one namespace per connector, `codemode`, and `console`.
// Runs once per fresh context before the program, so it captures the intrinsics it needs before any program
// code can replace them; the natives it receives are never reachable from the program.
(function (natives, captureConsole) {
  "use strict";
  const G = globalThis;
  const stringify = JSON.stringify;
  const isView = ArrayBuffer.isView;
  const U8 = Uint8Array;
  const AB = ArrayBuffer;
  const Str = String;
  const Err = Error;
  const P = Proxy;
  const define = Object.defineProperty;
  const freeze = Object.freeze;
  const create = Object.create;
  const finite = Number.isFinite;
  // Values JSON.stringify would silently change or drop: refused in step values, since replay could only
  // hand back the changed value (docs/design.md, "Values that JSON cannot carry"). Arguments keep the
  // reference's JSON semantics: the JSON form is what a person approves and what the connector receives.
  const lossy = [
    [Map, "a Map", "{}"],
    [Set, "a Set", "{}"],
    [WeakMap, "a WeakMap", "{}"],
    [WeakSet, "a WeakSet", "{}"],
    [RegExp, "a RegExp", "{}"],
    [Error, "an Error", "{}"],
    [Promise, "a Promise", "{}"],
  ];
  const BINARY = "__codemode_binary_v1__";
  const BIGINT = "__codemode_bigint_v1__";

  function replacer(key, value) {
    if (typeof value === "bigint") return { [BIGINT]: Str(value) };
    if (value !== null && typeof value === "object") {
      if (value instanceof AB) {
        return { [BINARY]: "ArrayBuffer", data: natives.b64(new U8(value)) };
      }
      if (isView(value)) {
        const bytes = new U8(value.buffer, value.byteOffset, value.byteLength);
        return { [BINARY]: value instanceof U8 ? "Uint8Array" : "ArrayBufferView", data: natives.b64(bytes) };
      }
    }
    return value;
  }

  const encode = (value) => stringify(value, replacer);

  function refuse(key, what, becomes) {
    const where = key === "" ? "" : " (at key " + stringify(Str(key)) + ")";
    throw new Err(what + where + " cannot be carried through JSON: it would " + becomes);
  }

  function strictReplacer(key, value) {
    const type = typeof value;
    if (type === "symbol") refuse(key, "a Symbol", "be dropped");
    if (type === "function") refuse(key, "a function", "be dropped");
    if (type === "number" && !finite(value)) refuse(key, Str(value), "become null");
    if (value !== null && type === "object") {
      for (let i = 0; i < lossy.length; i++) {
        if (value instanceof lossy[i][0]) refuse(key, lossy[i][1], "become " + lossy[i][2]);
      }
    }
    return replacer(key, value);
  }

  const encodeStrict = (value) => stringify(value, strictReplacer);
  const messageOf = (e) => {
    try {
      if (e !== null && (typeof e === "object" || typeof e === "function") && e.message !== undefined) {
        return Str(e.message);
      }
      return Str(e);
    } catch (_) {
      return "the value could not be converted to a string";
    }
  };

  // [json, error]: a step value as it crosses the durable boundary, or why it cannot.
  function encodeOrError(value) {
    try {
      return [encodeStrict(value), undefined];
    } catch (e) {
      return [undefined, messageOf(e)];
    }
  }

  // Any property is a method. Each method's function is made once per pass; `natives.call` returns the
  // promise itself (resolved, or rejected with the connector's error), so no async frame is needed.
  function namespace(connector) {
    const methods = create(null);
    return new P(freeze(create(null)), {
      get(_, name) {
        const method = Str(name);
        const known = methods[method];
        if (known !== undefined) return known;
        return (methods[method] = function (args) {
          let json, error;
          try {
            json = encode(args);
          } catch (e) {
            error = messageOf(e);
          }
          return natives.call(connector, method, json, error);
        });
      },
    });
  }

  async function step(name, fn) {
    const decision = natives.stepDecide(Str(name));
    if (decision.replay) return decision.value;
    const value = await fn();
    const [json, error] = encodeOrError(value);
    // The program gets the recorded value, as every replay will: a Date is its ISO string from the first
    // pass on, not only after an approval.
    return natives.stepRecord(decision.seq, json, error);
  }

  const search = async (query) => natives.search(Str(query));
  const describe = async (target) => natives.describe(Str(target));
  const run = async (name, input) => natives.snippet(Str(name), stringify(input));

  const codemode = new P(freeze(create(null)), {
    get(_, name) {
      const n = Str(name);
      if (n === "step") return step;
      if (n === "search") return search;
      if (n === "describe") return describe;
      if (n === "run") return run;
      return async function () {
        throw new Err('Tool "' + n + '" not found');
      };
    },
  });

  const constant = (name, value) =>
    define(G, name, { value, writable: false, enumerable: false, configurable: false });

  constant("codemode", codemode);
  const installConnectors = (names) => {
    for (let i = 0; i < names.length; i++) constant(names[i], namespace(names[i]));
  };

  const line = (args) => {
    let text = "";
    for (let i = 0; i < args.length; i++) text += (i === 0 ? "" : " ") + Str(args[i]);
    return text;
  };
  const quiet = () => undefined;
  const print = (prefix) => (captureConsole ? (...args) => natives.log(prefix + line(args)) : quiet);
  G.console = {
    log: print(""),
    warn: print("[warn] "),
    error: print("[error] "),
    info: quiet,
    debug: quiet,
    trace: quiet,
  };

  return { encode, messageOf, installConnectors };
})
