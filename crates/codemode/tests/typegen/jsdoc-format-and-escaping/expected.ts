type F = {
    /** @format date-time */
    when?: string;
    /**
     * Line one line two *\/ end
     * @format email
     */
    both?: string;
}