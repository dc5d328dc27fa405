"""Hand-written paraphrase pairs for bench/retrieval.py: (passage, question).

Each question asks for what its passage says in other words: synonyms, a description, a
situation instead of a term. `bench/retrieval_paraphrase.py` checks mechanically that a
question shares no content word (English stopwords removed, Snowball stems compared)
with its whole answer chunk, and drops (and counts) any pair that does.
"""

PAIRS: list[tuple[str, str]] = [
    # --- workplace, HR and benefits
    (
        "Equipment damage is covered by the employer when it happens during normal duties.",
        "who pays if my work laptop breaks",
    ),
    (
        "Staff accrue annual leave at two days for every month of service.",
        "how much vacation time do I earn",
    ),
    (
        "Parental leave lasts sixteen weeks at full salary for either parent.",
        "time off after having a baby",
    ),
    (
        "Remote employees receive a stipend for internet and furniture costs.",
        "money to set up a home office",
    ),
    (
        "Overtime beyond forty hours is compensated at one and a half times the base rate.",
        "extra pay for working late nights",
    ),
    (
        "Sick days require a medical certificate after the third consecutive absence.",
        "do I need a doctor's note when ill",
    ),
    (
        "The probation period for new hires ends after ninety days of employment.",
        "trial phase when starting a job",
    ),
    (
        "Resignation requires written notice one month before the final working day.",
        "how early must I tell them I'm quitting",
    ),
    (
        "Employees may claim reimbursement for professional certification exams.",
        "will the company refund my qualification test fee",
    ),
    (
        "Harassment complaints are handled confidentially by an independent ombudsperson.",
        "who can I report bullying to in private",
    ),
    (
        "The pension scheme matches contributions up to five percent of salary.",
        "retirement savings top-up offered",
    ),
    (
        "Bereavement leave of five days is granted after the death of a close relative.",
        "days off when a family member passes away",
    ),
    (
        "Jury service is paid leave and does not reduce holiday entitlement.",
        "called to court as a citizen juror, will I lose wages",
    ),
    (
        "Flexible hours allow arrival between seven and ten in the morning.",
        "can I start work later some days",
    ),
    (
        "Performance appraisals take place twice a year with the line manager.",
        "how often is my job reviewed",
    ),
    ("Salary is deposited on the last business day of each month.", "when do we get paid"),
    (
        "Dress code is business casual, with suits for client meetings.",
        "what clothes should I wear to the office",
    ),
    (
        "Unused holiday can be carried into the next year up to five days.",
        "what happens to vacation I didn't take",
    ),
    (
        "Company cars go to sales staff who travel over twenty thousand kilometres yearly.",
        "which employees get a vehicle",
    ),
    ("The canteen serves subsidised lunches from noon until two.", "cheap midday meals at work"),
    (
        "Gym membership fees are partly refunded through the wellness programme.",
        "fitness club discount for workers",
    ),
    (
        "A referral bonus is paid when a recommended candidate completes six months.",
        "reward for suggesting a friend for a job",
    ),
    (
        "Exit interviews are conducted by human resources on the final day.",
        "conversation when leaving the firm",
    ),
    (
        "Sabbaticals of up to six months are available after seven years of tenure.",
        "long unpaid break for veteran staff",
    ),
    ("Childcare vouchers can be exchanged for nursery fees.", "help paying for kindergarten"),
    # --- IT and security
    (
        "Passwords must be rotated every ninety days and contain twelve characters.",
        "how often do I change my login secret",
    ),
    (
        "Lost badges must be reported to reception so the card can be deactivated.",
        "I misplaced my access pass",
    ),
    (
        "Personal devices connect only to the guest wireless network.",
        "can my own phone use the office wifi",
    ),
    (
        "Phishing emails should be forwarded to the security team without clicking links.",
        "suspicious message asking for my credentials",
    ),
    (
        "Two-factor authentication is mandatory for the VPN.",
        "extra verification step to reach the internal network remotely",
    ),
    (
        "Backups of the file server run nightly and are kept for thirty days.",
        "how long are copies of our documents retained",
    ),
    (
        "Software installation requires approval from the service desk.",
        "can I add programs to my computer",
    ),
    (
        "Screens must lock automatically after five minutes of inactivity.",
        "display goes dark when idle",
    ),
    ("Printer toner is ordered through the facilities portal.", "where to request ink cartridges"),
    ("USB storage sticks are blocked on all corporate laptops.", "why won't my flash drive work"),
    (
        "Encryption of customer data at rest uses AES with 256-bit keys.",
        "how are stored client records protected",
    ),
    (
        "The helpdesk is staffed around the clock on weekdays.",
        "when can I call for computer support",
    ),
    (
        "Email attachments larger than twenty megabytes are rejected by the mail gateway.",
        "maximum file size I can send by message",
    ),
    (
        "Old hardware is wiped and recycled by a certified disposal vendor.",
        "what happens to retired computers",
    ),
    (
        "Admin rights are granted for a maximum of one week per request.",
        "temporary elevated privileges duration",
    ),
    # --- travel and expenses
    (
        "Economy class is standard for flights shorter than six hours.",
        "can I book business seats on a short trip",
    ),
    (
        "Hotel stays are capped at one hundred and fifty euros per night.",
        "maximum accommodation budget",
    ),
    (
        "Meal allowances cover breakfast, lunch and dinner while away on duty.",
        "food costs during a business trip",
    ),
    (
        "Receipts must be submitted within thirty days of the purchase.",
        "deadline for handing in proof of spending",
    ),
    (
        "Mileage for private cars is reimbursed at forty cents per kilometre.",
        "compensation for driving my own automobile",
    ),
    ("Taxis are allowed only when public transport is unavailable.", "may I take a cab"),
    (
        "International travel requires a risk assessment from the security office.",
        "going abroad for work, what approval do I need",
    ),
    (
        "Corporate cards must not be used for personal purchases.",
        "buying private stuff with the company credit card",
    ),
    (
        "Travel insurance is arranged automatically for every booked journey.",
        "am I covered if something goes wrong on a trip",
    ),
    (
        "Visa fees for work assignments are paid by the organisation.",
        "who covers entry permit costs",
    ),
    # --- facilities and safety
    (
        "Fire drills are held every quarter and the assembly point is the north car park.",
        "where do we gather when the alarm sounds",
    ),
    ("First aid kits are located beside each lift on every floor.", "where are bandages kept"),
    (
        "Visitors must sign in and wear a badge at all times.",
        "rules for guests coming to the building",
    ),
    ("Bicycles may be parked in the basement racks.", "where can I leave my bike"),
    (
        "The building is closed on public holidays and alarmed overnight.",
        "is the office open on national days off",
    ),
    (
        "Meeting rooms are booked through the calendar system up to four weeks ahead.",
        "how do I reserve a conference space",
    ),
    ("Smoking is prohibited within ten metres of any entrance.", "where may I light a cigarette"),
    (
        "Hard hats and steel-toed boots are required on the factory floor.",
        "protective gear needed in the plant",
    ),
    (
        "Spills of chemicals must be contained with the absorbent pads in the yellow cabinet.",
        "what to do when a hazardous liquid leaks",
    ),
    (
        "Ladders over three metres need a second person holding the base.",
        "climbing high, should someone steady it",
    ),
    (
        "Forklift operators must hold a valid licence renewed every three years.",
        "qualification to drive warehouse lifting trucks",
    ),
    (
        "Noise above eighty-five decibels requires ear protection.",
        "loud machinery, do I need plugs",
    ),
    (
        "Accidents are recorded in the incident log within twenty-four hours.",
        "how quickly must injuries be written down",
    ),
    ("Defibrillators are mounted in the lobby and the gym.", "where is the heart shock device"),
    (
        "The lift is serviced every month by an accredited engineer.",
        "how often is the elevator maintained",
    ),
    # --- finance, purchasing, legal
    ("Invoices are paid thirty days after receipt.", "when will suppliers get their money"),
    (
        "Purchases over ten thousand euros need three competing quotes.",
        "large orders, how many offers are required",
    ),
    (
        "Budgets are set in October for the following financial year.",
        "when is next year's spending plan decided",
    ),
    (
        "Gifts from suppliers worth more than fifty euros must be declared.",
        "vendor sent me a present, should I report it",
    ),
    ("Contracts are signed by two authorised directors.", "who can approve agreements"),
    ("Confidential documents are shredded rather than binned.", "how to dispose of secret papers"),
    (
        "Late payment incurs interest of eight percent above the base rate.",
        "penalty if a bill is overdue",
    ),
    ("The audit committee reviews the accounts each spring.", "when are the books checked"),
    ("Petty cash is limited to two hundred euros per office.", "small money box maximum"),
    (
        "Refunds to customers are processed within ten working days.",
        "how long until buyers get reimbursed",
    ),
    (
        "Either party may terminate the agreement with ninety days written notice.",
        "how to end the contract early",
    ),
    (
        "Liability is limited to the fees paid in the previous twelve months.",
        "maximum compensation if things go wrong",
    ),
    ("Disputes are settled by arbitration in Geneva.", "where are disagreements resolved"),
    (
        "The licence is non-transferable and personal to the purchaser.",
        "can I give the software rights to someone else",
    ),
    (
        "Intellectual property created during employment belongs to the company.",
        "who owns inventions I make at work",
    ),
    (
        "Personal data is deleted after seven years unless a legal hold applies.",
        "how long do you keep information about people",
    ),
    (
        "The warranty excludes damage caused by misuse or accidents.",
        "is breaking it by dropping covered by the guarantee",
    ),
    ("Prices exclude value added tax and delivery.", "does the cost include VAT and shipping"),
    (
        "Subcontracting requires the client's prior written consent.",
        "may the supplier hand work to another firm",
    ),
    (
        "Force majeure suspends obligations during events beyond reasonable control.",
        "what if a natural disaster stops delivery",
    ),
    # --- products and manuals
    (
        "Descale the kettle monthly with a solution of citric acid.",
        "remove limescale from the water boiler",
    ),
    (
        "The battery reaches a full charge in two hours using the supplied adapter.",
        "how long to power up completely",
    ),
    (
        "Hold the reset button for ten seconds to restore factory settings.",
        "return device to original configuration",
    ),
    (
        "The filter should be replaced every six months for best air quality.",
        "how often to swap the purifier cartridge",
    ),
    (
        "The vacuum cleaner empties its dust bin automatically into the base station.",
        "does the robot dispose of dirt itself",
    ),
    (
        "Do not immerse the base in water; wipe it with a damp cloth.",
        "how do I clean the bottom part",
    ),
    ("The projector lamp lasts about five thousand hours.", "bulb lifetime of the beamer"),
    (
        "Firmware updates are installed overnight when the device is idle.",
        "when does the gadget get new software",
    ),
    (
        "The thermostat learns the household schedule within a week.",
        "how quickly does the heating control adapt to our routine",
    ),
    (
        "A blinking red light indicates that the water tank is empty.",
        "what does the flashing warning mean",
    ),
    ("The blender has a pulse mode for crushing ice.", "can it chop frozen cubes"),
    ("Headphones fold flat to fit into the travel case.", "are the earphones compact for carrying"),
    (
        "The drill includes two batteries and a fast charger.",
        "what comes in the box with the power tool",
    ),
    (
        "The monitor supports a refresh rate of one hundred and forty-four hertz.",
        "how smooth is the screen for gaming",
    ),
    (
        "The router automatically switches channels to avoid interference.",
        "does the wifi box pick a quieter frequency itself",
    ),
    (
        "The e-bike assists pedalling up to twenty-five kilometres per hour.",
        "top motor-supported speed of the electric bicycle",
    ),
    (
        "Coffee beans should be stored in an airtight container away from light.",
        "keeping ground roast fresh",
    ),
    (
        "The washing machine locks its door during the spin cycle.",
        "why can't I open the laundry appliance",
    ),
    (
        "The oven self-cleans by heating to five hundred degrees.",
        "does the stove remove grease on its own",
    ),
    ("The smoke detector chirps when its battery is low.", "why is the alarm beeping every minute"),
    ("The camera records in low light using infrared.", "can the security cam see at night"),
    (
        "The scale measures body fat through electrodes in the platform.",
        "does the bathroom weighing device estimate fat percentage",
    ),
    (
        "The lawn mower cuts grass at heights from twenty to seventy millimetres.",
        "adjustable blade level for the garden",
    ),
    (
        "The dishwasher's eco programme uses nine litres of water.",
        "how much liquid does an energy-saving wash need",
    ),
    (
        "The fridge alarms when its door stays open longer than a minute.",
        "warning sound if the cooler is left ajar",
    ),
    # --- software and engineering
    (
        "Retry failed requests with exponential backoff up to five attempts.",
        "how should the client handle errors when calling the server again",
    ),
    (
        "The cache evicts the least recently used entries when full.",
        "which items are dropped from memory first",
    ),
    (
        "Database migrations run automatically at deployment.",
        "are schema changes applied on release",
    ),
    (
        "Logs are retained for fourteen days before rotation.",
        "how long are diagnostic records kept",
    ),
    (
        "The service scales horizontally by adding replicas behind a load balancer.",
        "how do we handle more traffic",
    ),
    (
        "Feature flags allow gradual rollout to a percentage of users.",
        "releasing new functionality to a few people first",
    ),
    (
        "Secrets are injected through environment variables, never committed to the repository.",
        "where do API keys and passwords live",
    ),
    (
        "Code reviews require approval from two maintainers before merging.",
        "how many people must accept a pull request",
    ),
    (
        "The build fails if test coverage drops below eighty percent.",
        "minimum share of lines exercised by checks",
    ),
    (
        "Timeouts default to thirty seconds for outbound HTTP calls.",
        "how long before a web request gives up",
    ),
    (
        "Rate limiting allows one hundred requests per minute per token.",
        "how many calls can I make",
    ),
    (
        "Deleted records are soft-deleted and purged after thirty days.",
        "can removed rows be recovered",
    ),
    (
        "The queue guarantees at-least-once delivery, so consumers must be idempotent.",
        "messages may arrive twice, handle duplicates",
    ),
    (
        "Dependencies are pinned to exact versions in the lock file.",
        "why doesn't the package manager pick newer libraries",
    ),
    (
        "Canary deployments receive five percent of traffic for an hour.",
        "trial release to a small slice of users",
    ),
    (
        "Health checks probe the readiness endpoint every ten seconds.",
        "how does the orchestrator know the app is up",
    ),
    (
        "Pagination uses opaque cursors instead of page numbers.",
        "how do I fetch the next batch of results",
    ),
    (
        "Timestamps are stored in UTC and converted for display.",
        "which time zone does the database use",
    ),
    (
        "Memory leaks were traced to an unbounded dictionary in the session handler.",
        "why did RAM usage keep growing",
    ),
    (
        "The outage was caused by an expired TLS certificate on the gateway.",
        "why did the site go down, security credential lapsed",
    ),
    ("Disk space ran out because log rotation was disabled.", "storage filled up, what went wrong"),
    (
        "A misconfigured DNS record sent traffic to the old data centre.",
        "requests went to the wrong facility due to a name lookup error",
    ),
    (
        "The incident was detected by synthetic monitoring within two minutes.",
        "how quickly did alerts notice the problem",
    ),
    (
        "Rollback restored the previous release in eight minutes.",
        "how fast did we revert the bad version",
    ),
    (
        "Database connections were exhausted by a slow query holding locks.",
        "pool ran dry because a sluggish statement blocked others",
    ),
    # --- health, science, everyday facts
    (
        "Adults should sleep between seven and nine hours each night.",
        "how much rest does a grown-up need",
    ),
    (
        "Vaccines train the immune system to recognise a pathogen.",
        "how do jabs protect against disease",
    ),
    (
        "Photosynthesis converts sunlight, water and carbon dioxide into sugar and oxygen.",
        "how plants make food from light",
    ),
    (
        "Water boils at one hundred degrees Celsius at sea level.",
        "temperature where H2O turns to steam",
    ),
    (
        "The heart pumps blood through arteries to every organ.",
        "what moves circulation around the body",
    ),
    ("Antibiotics do not work against viruses.", "will penicillin cure a cold"),
    ("Regular exercise lowers blood pressure and improves mood.", "benefits of working out"),
    (
        "Sunscreen should be reapplied every two hours outdoors.",
        "how often to put lotion on at the beach",
    ),
    ("Dehydration causes headaches, fatigue and dizziness.", "symptoms of not drinking enough"),
    ("Earthquakes occur where tectonic plates slide past each other.", "why does the ground shake"),
    ("The moon's gravity causes the tides of the oceans.", "why does the sea rise and fall"),
    ("Bees pollinate a third of the crops humans eat.", "insects important for farming food"),
    ("Lightning heats the air to about thirty thousand kelvin.", "how hot is a thunderstorm bolt"),
    ("Rust forms when iron reacts with oxygen and moisture.", "why does metal corrode"),
    ("Sound travels faster in water than in air.", "does noise move quicker underwater"),
    (
        "Diamonds are made of carbon atoms arranged in a crystal lattice.",
        "what are gems like that composed of",
    ),
    ("Owls hunt at night using acute hearing.", "nocturnal birds of prey find mice by listening"),
    (
        "Coral reefs are built by colonies of tiny marine animals.",
        "who constructs the underwater structures",
    ),
    ("Glaciers carve valleys as they move slowly downhill.", "how ice shapes mountains"),
    ("Yeast ferments sugar into alcohol and carbon dioxide.", "what makes beer bubbly"),
    (
        "Caffeine blocks adenosine receptors and delays drowsiness.",
        "why does coffee keep you awake",
    ),
    ("Calcium and vitamin D keep bones strong.", "nutrients for a healthy skeleton"),
    (
        "Migraines are often triggered by stress, bright light or missed meals.",
        "what sets off severe headaches",
    ),
    (
        "Hand washing for twenty seconds removes most germs.",
        "how long to scrub to get rid of bacteria",
    ),
    ("Fibre aids digestion and keeps the gut regular.", "roughage helps the bowels"),
    # --- customer support
    (
        "Orders ship within two business days from our warehouse.",
        "how soon will my package be sent",
    ),
    (
        "Returns are accepted within thirty days in the original packaging.",
        "can I send something back",
    ),
    (
        "Tracking numbers are emailed once the parcel leaves the depot.",
        "how do I follow my delivery",
    ),
    (
        "Gift cards never expire and can be used online or in store.",
        "is there a deadline on vouchers",
    ),
    (
        "Subscriptions renew automatically unless cancelled before the billing date.",
        "will I be charged again next month",
    ),
    (
        "Accounts are locked after five incorrect password attempts.",
        "why can't I sign in after several tries",
    ),
    ("Refunds go back to the original payment method.", "will I get my money on my card"),
    (
        "Student discounts require a valid university email address.",
        "reduced price for pupils at college",
    ),
    ("Damaged items can be exchanged free of charge.", "what if my purchase arrived broken"),
    ("Live chat is available from nine to five on weekdays.", "when can I talk to an agent online"),
    ("Shipping is free for orders above fifty euros.", "when is delivery at no cost"),
    (
        "Pre-orders are charged when the item is dispatched.",
        "when do I pay for something not released yet",
    ),
    ("Loyalty points expire after twelve months of inactivity.", "do reward credits run out"),
    (
        "Changing the delivery address is possible until the order is packed.",
        "can I send it somewhere else after buying",
    ),
    ("The app works offline and syncs when a connection returns.", "use without internet"),
    # --- history, geography, culture
    (
        "The Great Wall of China stretches over twenty thousand kilometres.",
        "how long is the famous barrier in Asia",
    ),
    (
        "The Amazon rainforest produces a large share of the planet's oxygen.",
        "South American jungle importance for breathing air",
    ),
    ("Mount Everest is the tallest peak above sea level.", "highest mountain on earth"),
    ("The Sahara is the largest hot desert.", "biggest sandy dry region"),
    (
        "The printing press spread literacy across Europe in the fifteenth century.",
        "Gutenberg invention effect on reading",
    ),
    (
        "Penicillin was discovered by accident in a mouldy petri dish.",
        "how was the first antibiotic found",
    ),
    (
        "The Roman aqueducts carried water across valleys using gravity.",
        "ancient Italian channels for supplying cities",
    ),
    (
        "Tea was introduced to Britain in the seventeenth century.",
        "when did the English start drinking that brew",
    ),
    ("The Olympic Games began in ancient Greece.", "origin of the international sports festival"),
    (
        "Venice is built on more than one hundred small islands.",
        "Italian city on lagoons and canals",
    ),
    ("The Nile flows north into the Mediterranean.", "which way does Egypt's river run"),
    (
        "Chess originated in India around the sixth century.",
        "where was the board game with kings and pawns invented",
    ),
    (
        "The Eiffel Tower was built for the 1889 World's Fair.",
        "why was the Paris landmark constructed",
    ),
    (
        "Jazz emerged in New Orleans in the early twentieth century.",
        "birthplace of that improvised music",
    ),
    ("The Moon landing took place in July 1969.", "when did astronauts first walk up there"),
    # --- home, cooking, garden
    ("Bread dough should rise until it doubles in size.", "how long to let the loaf prove"),
    (
        "Tomatoes need at least six hours of direct sun.",
        "how much light do those red vegetables require",
    ),
    (
        "Pasta is cooked in salted boiling water until al dente.",
        "how to prepare spaghetti properly",
    ),
    (
        "Houseplants are overwatered more often than underwatered.",
        "common mistake with indoor greenery",
    ),
    ("Cast iron pans should be dried and oiled after washing.", "care for a heavy skillet"),
    (
        "Compost needs a balance of green and brown material.",
        "mixing kitchen scraps and leaves for garden soil",
    ),
    ("Rice should rest covered for ten minutes after cooking.", "let grains steam before serving"),
    ("Frozen meat thaws safely in the refrigerator overnight.", "how to defrost chicken"),
    ("Radiators should be bled when the top stays cold.", "heater warm at the bottom only"),
    ("Gutters must be cleared of leaves every autumn.", "roof drains clogged in fall"),
    ("Paint needs two coats for an even finish.", "how many layers on the wall"),
    (
        "Mould grows in damp rooms with poor ventilation.",
        "why is there black fungus in the bathroom",
    ),
    ("Dogs need a walk at least twice a day.", "how often should I take my puppy out"),
    ("Cats sleep between twelve and sixteen hours daily.", "how much do felines nap"),
    ("Goldfish need a filtered tank rather than a bowl.", "proper home for a pet carp"),
    # --- education, money, transport
    (
        "Enrolment for the autumn semester closes on the first of August.",
        "deadline to register for fall classes",
    ),
    ("Tuition can be paid in three instalments.", "split university fees into parts"),
    (
        "Library books are lent for three weeks and can be renewed twice.",
        "how long can I borrow a novel",
    ),
    ("Exams may be retaken once after a failing grade.", "second chance if I flunk the test"),
    (
        "Scholarships are awarded on academic merit and financial need.",
        "grants for good students who can't afford it",
    ),
    (
        "Interest on savings accounts is paid quarterly.",
        "how often does the bank add earnings to deposits",
    ),
    ("A mortgage term is usually twenty-five years.", "typical length of a home loan"),
    ("Credit scores improve when bills are paid on time.", "how to raise my rating for borrowing"),
    ("Index funds track a market benchmark at low cost.", "cheap passive investing"),
    (
        "Inflation reduces the purchasing power of money over time.",
        "why things get more expensive each year",
    ),
    (
        "Trains run every fifteen minutes during peak hours.",
        "how frequent is rail service in the rush",
    ),
    (
        "Season tickets are cheaper than daily fares for commuters.",
        "save on travel to work with a pass",
    ),
    ("Tyre pressure should be checked monthly.", "how often to inspect wheels for air"),
    (
        "Electric vehicles charge to eighty percent in about thirty minutes at rapid stations.",
        "fast top-up time for a battery car",
    ),
    (
        "Speed cameras fine drivers exceeding the limit by more than five kilometres per hour.",
        "penalty for going too fast on the road",
    ),
    (
        "Passports must be valid for six months beyond the travel date.",
        "document expiry rules for going overseas",
    ),
    (
        "Checked luggage may weigh up to twenty-three kilograms.",
        "heaviest suitcase allowed in the hold",
    ),
    (
        "Liquids in hand baggage are limited to one hundred millilitres per container.",
        "bottle size allowed in carry-on",
    ),
    ("Boarding closes twenty minutes before departure.", "latest time to get on the plane"),
    ("Bicycles travel free on regional trains outside rush hour.", "can I bring my bike aboard"),
    # --- weather, energy, environment
    (
        "Solar panels generate power even on cloudy days, at lower output.",
        "do photovoltaic roofs work when overcast",
    ),
    (
        "Heat pumps move warmth from outside air into the house.",
        "how does that efficient heating device work",
    ),
    (
        "Insulating the loft reduces heat loss through the roof.",
        "keep the attic from leaking warmth",
    ),
    (
        "LED bulbs use about a fifth of the electricity of incandescent lamps.",
        "energy saving lights consumption",
    ),
    (
        "Recycling one aluminium can saves enough energy to run a television for three hours.",
        "benefit of reusing soda tins",
    ),
    ("Hurricanes form over warm ocean water.", "where do tropical cyclones develop"),
    ("Fog forms when moist air cools to its dew point.", "why is there mist in the morning"),
    ("Snowflakes have six-sided symmetry.", "shape of ice crystals falling in winter"),
    ("Wind turbines stop turning in storms to prevent damage.", "why do windmills halt in gales"),
    (
        "Rainwater harvesting collects runoff from roofs for gardens.",
        "catch precipitation to water plants",
    ),
]
