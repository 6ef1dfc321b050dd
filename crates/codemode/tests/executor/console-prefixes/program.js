console.log("hello", {a: 1}); console.warn("careful"); console.error("bad", 2); console.info("not captured"); return 1
