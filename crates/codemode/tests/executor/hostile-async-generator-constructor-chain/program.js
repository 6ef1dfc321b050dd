const AG = Object.getPrototypeOf(async function* () {}).constructor; return await AG('yield globalThis')().next()
