try { await import('node:' + 'fs') } catch (e) { return [e instanceof Error, String(e.message)] }
