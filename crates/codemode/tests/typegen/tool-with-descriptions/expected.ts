type GetWeatherInput = {
    /** City name */
    city: string;
    units?: "celsius" | "fahrenheit";
}
type GetWeatherOutput = unknown

declare const codemode: {
	/**
	 * Get weather for a city
	 * @param input.city - City name
	 */
	getWeather: (input: GetWeatherInput) => Promise<GetWeatherOutput>;
}