const make = (p) => (x) => `${p}-${x}`; const f = make('a'); return [f(1), f(2)]
