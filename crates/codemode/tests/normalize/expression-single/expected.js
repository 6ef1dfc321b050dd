async () => {
return (1 + 2)
}