async () => {
return (console.log("hello"))
}