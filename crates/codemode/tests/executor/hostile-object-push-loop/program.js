const a = []; for (let i = 0;; i++) a.push({i, s: 'abc' + i})
