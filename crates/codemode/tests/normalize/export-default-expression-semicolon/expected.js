async () => {
return (40 + 2)
}