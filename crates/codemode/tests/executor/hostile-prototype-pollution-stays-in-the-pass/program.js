Object.prototype.polluted = 1; Array.prototype.push = null; JSON.stringify = () => 'x'; const r = await items.echo({a: [1]}); return [r.a.length, ({}).polluted]
