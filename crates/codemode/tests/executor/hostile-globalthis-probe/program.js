return Object.getOwnPropertyNames(globalThis).filter((n) => /process|require|fetch|Deno|module|exports|__|setTimeout|import|host|natives|channel/i.test(n))
