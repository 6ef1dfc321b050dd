const e = eval; return (0, e)('globalThis')
