const f = (n) => f(n + 1); f(0)
