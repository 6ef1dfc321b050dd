const f = (n) => f(n + 1); try { f(0) } catch (e) { return 'caught' }
