async () => {
return 42
}