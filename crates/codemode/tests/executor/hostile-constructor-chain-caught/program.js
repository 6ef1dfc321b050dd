try { return [].constructor.constructor('return 1')() } catch (e) { return [e instanceof Error, e.name, String(e.message)] }
