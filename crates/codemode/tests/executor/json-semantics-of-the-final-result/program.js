return {m: new Map([[1,2]]), u: undefined, arr: [undefined, () => 1], inf: Infinity}
