package generator

import "strings"

// The word lists the name and place functions pick from. Changing a list changes the
// messages of every seed (TestGeneratorGolden notices), so only append to them with care.
var (
	firstNames = strings.Fields(`James Mary John Patricia Robert Jennifer Michael Linda William
		Elizabeth David Barbara Richard Susan Joseph Jessica Thomas Sarah Charles Karen Christopher
		Lisa Daniel Nancy Matthew Betty Anthony Margaret Mark Sandra Donald Ashley Steven Kimberly
		Paul Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian Dorothy George
		Melissa Timothy Deborah Ronald Stephanie Edward Rebecca Jason Sharon Jeffrey Laura Ryan
		Cynthia Jacob Kathleen Gary Amy Nicholas Angela Eric Shirley Jonathan Anna Stephen Brenda
		Larry Pamela Justin Emma Scott Nicole Brandon Helen Benjamin Samantha Samuel Katherine
		Gregory Christine Alexander Debra Frank Rachel Patrick Carolyn Raymond Janet Jack Catherine
		Dennis Maria Jerry Heather Tyler Diane Aaron Ruth Jose Julie Adam Olivia Nathan Joyce Henry
		Virginia Zachary Victoria Douglas Kelly Peter Lauren Kyle Christina Noah Joan Ethan Evelyn
		Jeremy Judith Walter Megan Christian Andrea Keith Cheryl Roger Hannah Terry Jacqueline
		Austin Martha Sean Gloria Gerald Teresa Carl Ann Harold Sara Dylan Madison Arthur Frances
		Lawrence Kathryn Jordan Janice Jesse Jean Bryan Abigail Billy Alice Bruce Judy Gabriel
		Sophia Joe Grace Logan Denise Alan Amber Juan Doris Albert Marilyn Willie Danielle Elijah
		Beverly Wayne Isabella Randy Theresa Vincent Diana Mason Natalie Roy Brittany Ralph
		Charlotte Bobby Marie Russell Kayla Bradley Alexis Philip Lori Eugene Ada`)

	lastNames = strings.Fields(`Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez
		Martinez Hernandez Lopez Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee
		Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King
		Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell
		Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes
		Stewart Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey
		Reed Kelly Howard Ramos Kim Cox Ward Richardson Watson Brooks Chavez Wood James Bennett
		Gray Mendoza Ruiz Hughes Price Alvarez Castillo Sanders Patel Myers Long Ross Foster
		Jimenez Powell Jenkins Perry Russell Sullivan Bell Coleman Butler Henderson Barnes
		Gonzales Fisher Vasquez Simmons Romero Jordan Patterson Alexander Hamilton Graham Reynolds
		Griffin Wallace Moreno West Cole Hayes Bryant Herrera Gibson Ellis Tran Medina Aguilar
		Stevens Murray Ford Castro Marshall Owens Harrison Fernandez McDonald Woods Washington
		Kennedy Wells Vargas Henry Chen Freeman Webb Tucker Guzman Burns Crawford Olson Simpson
		Porter Hunter Gordon Mendez Silva Shaw Snyder Mason Dixon Munoz Hunt Hicks Holmes Palmer
		Wagner Black Robertson Boyd Rose Stone Salazar Fox Warren Mills Meyer Rice Schmidt Garza
		Daniels Ferguson Nichols Stephens Soto Weaver Ryan Gardner Payne Grant Dunn Kelley Spencer
		Hawkins Arnold Pierce Hansen Peters Santos Hart Bradley Knight Elliott Cunningham Duncan
		Armstrong Hudson Carroll Lane Riley Andrews Ray Berry Perkins Hoffman Johnston Matthews
		Pena Richards Willis Carpenter Lawrence Sandoval`)

	countries = splitList(`Afghanistan|Albania|Algeria|Andorra|Angola|Argentina|Armenia|
		Australia|Austria|Azerbaijan|Bahamas|Bahrain|Bangladesh|Barbados|Belarus|Belgium|Belize|
		Benin|Bhutan|Bolivia|Bosnia and Herzegovina|Botswana|Brazil|Brunei|Bulgaria|Burkina Faso|
		Burundi|Cambodia|Cameroon|Canada|Cape Verde|Central African Republic|Chad|Chile|China|
		Colombia|Comoros|Costa Rica|Croatia|Cuba|Cyprus|Czech Republic|Denmark|Djibouti|Dominica|
		Dominican Republic|Ecuador|Egypt|El Salvador|Equatorial Guinea|Eritrea|Estonia|Eswatini|
		Ethiopia|Fiji|Finland|France|Gabon|Gambia|Georgia|Germany|Ghana|Greece|Grenada|Guatemala|
		Guinea|Guinea-Bissau|Guyana|Haiti|Honduras|Hungary|Iceland|India|Indonesia|Iran|Iraq|
		Ireland|Israel|Italy|Jamaica|Japan|Jordan|Kazakhstan|Kenya|Kiribati|Kuwait|Kyrgyzstan|
		Laos|Latvia|Lebanon|Lesotho|Liberia|Libya|Liechtenstein|Lithuania|Luxembourg|Madagascar|
		Malawi|Malaysia|Maldives|Mali|Malta|Marshall Islands|Mauritania|Mauritius|Mexico|
		Micronesia|Moldova|Monaco|Mongolia|Montenegro|Morocco|Mozambique|Myanmar|Namibia|Nauru|
		Nepal|Netherlands|New Zealand|Nicaragua|Niger|Nigeria|North Korea|North Macedonia|Norway|
		Oman|Pakistan|Palau|Panama|Papua New Guinea|Paraguay|Peru|Philippines|Poland|Portugal|
		Qatar|Romania|Russia|Rwanda|Saint Lucia|Samoa|San Marino|Saudi Arabia|Senegal|Serbia|
		Seychelles|Sierra Leone|Singapore|Slovakia|Slovenia|Solomon Islands|Somalia|South Africa|
		South Korea|South Sudan|Spain|Sri Lanka|Sudan|Suriname|Sweden|Switzerland|Syria|Taiwan|
		Tajikistan|Tanzania|Thailand|Togo|Tonga|Trinidad and Tobago|Tunisia|Turkey|Turkmenistan|
		Tuvalu|Uganda|Ukraine|United Arab Emirates|United Kingdom|United States|Uruguay|
		Uzbekistan|Vanuatu|Venezuela|Vietnam|Yemen|Zambia|Zimbabwe`)

	cities = splitList(`Tokyo|Delhi|Shanghai|Sao Paulo|Mexico City|Cairo|Mumbai|Beijing|Dhaka|
		Osaka|New York|Karachi|Buenos Aires|Istanbul|Kolkata|Manila|Lagos|Rio de Janeiro|Tianjin|
		Kinshasa|Los Angeles|Moscow|Shenzhen|Lahore|Bangalore|Paris|Bogota|Jakarta|Chennai|Lima|
		Bangkok|Seoul|Nagoya|Hyderabad|London|Tehran|Chicago|Chengdu|Nanjing|Wuhan|Ho Chi Minh City|
		Luanda|Ahmedabad|Kuala Lumpur|Hong Kong|Hangzhou|Riyadh|Surat|Santiago|Madrid|Pune|Houston|
		Dallas|Toronto|Dar es Salaam|Miami|Belo Horizonte|Singapore|Philadelphia|Atlanta|Fukuoka|
		Khartoum|Barcelona|Johannesburg|Saint Petersburg|Washington|Yangon|Alexandria|Guadalajara|
		Ankara|Melbourne|Sydney|Boston|Phoenix|Berlin|Rome|Nairobi|Casablanca|Montreal|Seattle|
		Amsterdam|Vienna|Warsaw|Prague|Budapest|Lisbon|Dublin|Stockholm|Oslo|Copenhagen|Helsinki|
		Athens|Zurich|Munich|Milan|Auckland|Vancouver|San Francisco|Denver|Austin`)

	states = splitList(`Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|
		Florida|Georgia|Hawaii|Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|
		Massachusetts|Michigan|Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|
		New Jersey|New Mexico|New York|North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|
		Rhode Island|South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|Washington|
		West Virginia|Wisconsin|Wyoming`)

	companySuffixes = strings.Fields(`Inc LLC Ltd Group Holdings Corp Partners Industries Systems Labs`)
	streetSuffixes  = strings.Fields(`Street Avenue Road Lane Drive Boulevard Way Court Place Terrace`)
	emailDomains    = strings.Fields(`example.com example.net example.org mail.example.com`)
	genders         = []string{"male", "female"}

	loremWords = strings.Fields(`lorem ipsum dolor sit amet consectetur adipiscing elit sed do
		eiusmod tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis
		nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat duis aute irure
		in reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat
		cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum`)
)

// splitList splits a list written with | between items, ignoring line breaks and indentation.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, "|") {
		if item = strings.Join(strings.Fields(item), " "); item != "" {
			out = append(out, item)
		}
	}
	return out
}
