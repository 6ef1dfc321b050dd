const AsyncFunction = (async function () {}).constructor; return await AsyncFunction('return process')()
