const f = (n) => n ? f(n - 1) : 0; return f(10000)
