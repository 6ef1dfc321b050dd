const G = (function* () {}).constructor; return G('yield 1')().next()
